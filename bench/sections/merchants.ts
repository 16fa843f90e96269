/**
 * merchants: `GET /v1/partners/merchant` throughput at 64 connections (autocannon) against the bare
 * node:http server running the same statement, then the driver alone under sustained load.
 */
import autocannon from 'autocannon';
import type { Child } from '../lib/children.js';
import type { BenchContext } from '../lib/context.js';
import { backendsCpuDelta, backendsCpuMs, commandCpuMs, cpuPerRequest, processCpuMs } from '../lib/cpu.js';
import { request } from '../lib/http.js';
import { log } from '../lib/log.js';
import { int, ratio } from '../lib/stats.js';
import { measureSustained, type SustainedResult } from '../lib/sustained.js';
import { startBare, startFramework } from './lists.js';
import { mark, type Section } from './types.js';

const PATH = '/v1/partners/merchant?page=1&limit=10';

interface Round {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  /** The server process's CPU time (user + system) per answered request, µs; null without /proc. */
  cpuUsPerRequest: number | null;
  /** PostgreSQL's CPU time (every `postgres` process) per answered request, µs; null without /proc. */
  pgCpuUsPerRequest: number | null;
  /** The CPU time of the PostgreSQL backends serving this server's connections only, µs per request. */
  backendsCpuUsPerRequest: number | null;
}

export interface MerchantsResult {
  connections: number;
  durationSeconds: number;
  apiRps: number;
  bareRps: number;
  apiP50: number;
  bareP50: number;
  apiRoundsRps: number[];
  bareRoundsRps: number[];
  /** The framework floor (`framework-server.ts`): tRPC + trpc-to-openapi and the statement, nothing else. */
  frameworkRps: number;
  frameworkP50: number;
  frameworkRoundsRps: number[];
  ratio: number;
  /** CPU per request (µs) of the server process and of PostgreSQL, mean of the timed rounds; null without /proc. */
  cpu: Record<'api' | 'framework' | 'bare', CpuPerRequest>;
  sustained: SustainedResult;
}

const TARGET = 0.8;
const CONNECTIONS = 64;

async function cannon(
  ctx: BenchContext,
  server: Child,
  headers: Record<string, string>,
  seconds: number,
): Promise<Round> {
  const target = server.url;
  const pgPort = Number(new URL(ctx.url).port || 5432);
  const cpuBefore = processCpuMs(server.process.pid);
  const pgBefore = commandCpuMs('postgres');
  // Read inside the window of every postgres process's reading, so the backends' share never exceeds it.
  const backendsBefore = await backendsCpuMs(ctx.raw, server.process.pid, pgPort);
  const result = await autocannon({
    url: `${target}${PATH}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`merchant list at ${target}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  const backendsAfter = await backendsCpuMs(ctx.raw, server.process.pid, pgPort);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    cpuUsPerRequest: cpuPerRequest(cpuBefore, processCpuMs(server.process.pid), result.requests.total),
    pgCpuUsPerRequest: cpuPerRequest(pgBefore, commandCpuMs('postgres'), result.requests.total),
    backendsCpuUsPerRequest: cpuPerRequest(0, backendsCpuDelta(backendsBefore, backendsAfter), result.requests.total),
  };
}

/** The three servers answer the timed request with the same bytes (else the comparison means nothing). */
async function sameBodies(servers: [Child, Record<string, string>][]): Promise<void> {
  const bodies: string[] = [];
  for (const [server, headers] of servers) {
    const res = await request(`${server.url}${PATH}`, { headers });
    if (res.status !== 200) throw new Error(`merchant list at ${server.url}: ${res.status} ${res.body.slice(0, 200)}`);
    bodies.push(res.body);
  }
  if (new Set(bodies).size !== 1)
    throw new Error(`merchant list: the servers' bodies differ (${bodies.map((b) => b.length).join(', ')} bytes)`);
}

interface CpuPerRequest {
  server: number | null;
  /** Every `postgres` process (autovacuum and the checkpointer included). */
  postgres: number | null;
  /** The backends serving this server's connections only. */
  backends: number | null;
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const meanOrNull = (xs: (number | null)[]) =>
  xs.some((x) => x === null) ? null : mean(xs.filter((x): x is number => x !== null));

export const merchants: Section<MerchantsResult> = {
  title: 'Merchant list',
  async run(ctx) {
    const seconds = ctx.settings.durationSeconds;
    const bare = await startBare(ctx);
    const framework = await startFramework(ctx);
    const apiRounds: Round[] = [];
    const bareRounds: Round[] = [];
    const frameworkRounds: Round[] = [];
    try {
      await sameBodies([
        [ctx.api, ctx.auth],
        [framework, {}],
        [bare, {}],
      ]);
      // Warm all three, then alternate two rounds each so background load hits them alike.
      await cannon(ctx, ctx.api, ctx.auth, seconds);
      await cannon(ctx, framework, {}, seconds);
      await cannon(ctx, bare, {}, seconds);
      for (let round = 0; round < 2; round++) {
        apiRounds.push(await cannon(ctx, ctx.api, ctx.auth, seconds));
        frameworkRounds.push(await cannon(ctx, framework, {}, seconds));
        bareRounds.push(await cannon(ctx, bare, {}, seconds));
      }
    } finally {
      await framework.stop();
      await bare.stop();
    }
    const apiRps = mean(apiRounds.map((r) => r.rps));
    const bareRps = mean(bareRounds.map((r) => r.rps));
    const cpu = { api: cpuOf(apiRounds), framework: cpuOf(frameworkRounds), bare: cpuOf(bareRounds) };
    log(
      `  merchants: API ${int(apiRps)} req/s, bare ${int(bareRps)} req/s; server CPU per request API ${int(cpu.api.server ?? Number.NaN)} µs, bare ${int(cpu.bare.server ?? Number.NaN)} µs`,
    );
    const sustained = await measureSustained(ctx.raw, {
      callers: CONNECTIONS,
      windows: 4,
      windowSeconds: ctx.settings.quick ? 1 : seconds / 2,
    });
    log(`  merchants: driver under sustained load ${sustained.windows.map(int).join(', ')} queries/s`);
    return {
      connections: CONNECTIONS,
      durationSeconds: seconds,
      apiRps,
      bareRps,
      apiP50: mean(apiRounds.map((r) => r.p50)),
      bareP50: mean(bareRounds.map((r) => r.p50)),
      apiRoundsRps: apiRounds.map((r) => r.rps),
      bareRoundsRps: bareRounds.map((r) => r.rps),
      frameworkRps: mean(frameworkRounds.map((r) => r.rps)),
      frameworkP50: mean(frameworkRounds.map((r) => r.p50)),
      frameworkRoundsRps: frameworkRounds.map((r) => r.rps),
      ratio: apiRps / bareRps,
      cpu,
      sustained,
    };
  },
  targets(result) {
    return [
      {
        what: `merchant list at ${result.connections} connections: API / bare req/s`,
        target: `>= ${TARGET}x`,
        value: ratio(result.ratio),
        met: result.ratio >= TARGET,
      },
    ];
  },
  report(result, settings) {
    const { sustained } = result;
    return [
      `## GET /v1/partners/merchant throughput, ${result.connections} connections, ${result.durationSeconds} s x 2 rounds`,
      '',
      '| server | req/s | p50 latency | API / bare | target | met |',
      '|---|---|---|---|---|---|',
      `| API | ${int(result.apiRps)} | ${result.apiP50.toFixed(1)} ms | ${ratio(result.ratio)} | >= ${TARGET}x | ${mark(result.ratio >= TARGET)} |`,
      `| framework floor: tRPC + trpc-to-openapi, same statement | ${int(result.frameworkRps)} | ${result.frameworkP50.toFixed(1)} ms | ${ratio(result.frameworkRps / result.bareRps)} | | |`,
      `| bare node:http, same statement | ${int(result.bareRps)} | ${result.bareP50.toFixed(1)} ms | 1.00x | | |`,
      '',
      `Per round (req/s): API ${result.apiRoundsRps.map(int).join(', ')}; framework floor ${result.frameworkRoundsRps.map(int).join(', ')}; bare ${result.bareRoundsRps.map(int).join(', ')}.`,
      '',
      ...cpuLines(result),
      `### The driver under sustained load: \`select 1\` from ${sustained.callers} callers on a pool of ${settings.poolMax}, ${sustained.windows.length} windows of ${sustained.windowSeconds} s`,
      '',
      '| window | queries/s | against the first |',
      '|---|---|---|',
      ...sustained.windows.map(
        (qps, i) => `| ${i + 1} | ${int(qps)} | ${ratio(qps / (sustained.windows[0] ?? qps))} |`,
      ),
      '',
      `Last against first: ${ratio(sustained.ratio)}. Unpatched postgres.js 3.4.9 fell steadily here (27k then 5.5k queries/s after 40 s); see bench/README.md.`,
      '',
    ];
  },
};

const cpuOf = (rounds: Round[]): CpuPerRequest => ({
  server: meanOrNull(rounds.map((r) => r.cpuUsPerRequest)),
  postgres: meanOrNull(rounds.map((r) => r.pgCpuUsPerRequest)),
  backends: meanOrNull(rounds.map((r) => r.backendsCpuUsPerRequest)),
});

/** CPU per request: what the req/s ratio comes from, steadier than req/s on a shared machine. */
function cpuLines(result: MerchantsResult): string[] {
  const { api, framework, bare } = result.cpu;
  const us = (value: number | null) => (value === null ? 'n/a' : `${int(value)} µs`);
  const against = (value: number | null) =>
    value === null || bare.server === null ? 'n/a' : ratio(value / bare.server);
  return [
    'CPU per request (user + system, from /proc), the timed rounds. autocannon, the server and PostgreSQL share the 2 cores, so req/s follows the CPU each request costs:',
    '',
    '| server | server process | server / bare | its PostgreSQL backends | every postgres process |',
    '|---|---|---|---|---|',
    `| API | ${us(api.server)} | ${against(api.server)} | ${us(api.backends)} | ${us(api.postgres)} |`,
    `| framework floor | ${us(framework.server)} | ${against(framework.server)} | ${us(framework.backends)} | ${us(framework.postgres)} |`,
    `| bare | ${us(bare.server)} | 1.00x | ${us(bare.backends)} | ${us(bare.postgres)} |`,
    '',
  ];
}
