/**
 * merchants: `GET /v1/partners/merchant` throughput at 64 connections (autocannon) against the bare
 * node:http server running the same statement, then the driver alone under sustained load.
 */
import autocannon from 'autocannon';
import { log } from '../lib/log.js';
import { int, ratio } from '../lib/stats.js';
import { measureSustained, type SustainedResult } from '../lib/sustained.js';
import { startBare } from './lists.js';
import { mark, type Section } from './types.js';

interface Round {
  rps: number;
  p50: number;
  p99: number;
  total: number;
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
  ratio: number;
  sustained: SustainedResult;
}

const TARGET = 0.8;
const CONNECTIONS = 64;

async function cannon(target: string, headers: Record<string, string>, seconds: number): Promise<Round> {
  const result = await autocannon({
    url: `${target}/v1/partners/merchant?page=1&limit=10`,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`merchant list at ${target}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
  };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

export const merchants: Section<MerchantsResult> = {
  title: 'Merchant list',
  async run(ctx) {
    const seconds = ctx.settings.durationSeconds;
    const bare = await startBare(ctx);
    const apiRounds: Round[] = [];
    const bareRounds: Round[] = [];
    try {
      // Warm both, then alternate two rounds each so background load hits both alike.
      await cannon(ctx.api.url, ctx.auth, seconds);
      await cannon(bare.url, {}, seconds);
      for (let round = 0; round < 2; round++) {
        apiRounds.push(await cannon(ctx.api.url, ctx.auth, seconds));
        bareRounds.push(await cannon(bare.url, {}, seconds));
      }
    } finally {
      await bare.stop();
    }
    const apiRps = mean(apiRounds.map((r) => r.rps));
    const bareRps = mean(bareRounds.map((r) => r.rps));
    log(`  merchants: API ${int(apiRps)} req/s, bare ${int(bareRps)} req/s`);
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
      ratio: apiRps / bareRps,
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
      `| bare node:http, same statement | ${int(result.bareRps)} | ${result.bareP50.toFixed(1)} ms | 1.00x | | |`,
      '',
      `Per round (req/s): API ${result.apiRoundsRps.map(int).join(', ')}; bare ${result.bareRoundsRps.map(int).join(', ')}.`,
      '',
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
