/**
 * load: the mixed load of `pnpm loadtest` (packages/server/scripts/lib/loadtest.ts) against the same
 * mix on a baseline git ref built in a worktree, in alternating rounds of one run, each server on
 * a fresh database of its own; a hot-merchant row (every collect to one merchant's tag, as the
 * loadtest) beside a spread row (collects over 100 merchants' tags). See bench/README.md.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Child } from '../lib/children.js';
import { BENCH_DIR, type BenchContext } from '../lib/context.js';
import { backendsCpuDelta, backendsCpuMs, commandCpuMs, cpuPerRequest, processCpuMs } from '../lib/cpu.js';
import { log } from '../lib/log.js';
import { git, runStamp, type Side, SPREAD_MERCHANTS, startTarget, type Target, worktreeFor } from '../lib/refs.js';
import { int, ratio } from '../lib/stats.js';
import type { Section } from './types.js';

/** The pinned baseline: the last commit before the round that lost the mixed load's throughput (bench/README.md). */
const LOAD_BASELINE_REF = '129bee5';
const CONNECTIONS = 64;
/** Throughput of this tree / the baseline's, hot row (the loadtest's mix). */
const TARGET_VS_BASELINE = 0.95;
/** Hot row / spread row of this tree. */
const TARGET_HOT_VS_SPREAD = 0.9;

type Shape = 'hot' | 'spread';

interface Round {
  side: Side;
  shape: Shape;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  failed: number;
  /** The server process's CPU per answered request (µs); null without /proc. */
  serverCpuUs: number | null;
  /** Every postgres process's CPU per answered request (µs; other databases' work too); null without /proc. */
  pgCpuUs: number | null;
  /** The CPU of the PostgreSQL backends serving this ref's processes, per answered request (µs). */
  backendsCpuUs: number | null;
}

interface RouteCpu {
  side: Side;
  route: string;
  rps: number;
  p50: number;
  serverCpuUs: number | null;
  pgCpuUs: number | null;
}

interface Row {
  side: Side;
  shape: Shape;
  /** Medians over the rounds. */
  rps: number;
  p50: number;
  p99: number;
  serverCpuUs: number | null;
  pgCpuUs: number | null;
  backendsCpuUs: number | null;
}

export interface LoadResult {
  baselineRef: string;
  baselineSha: string;
  currentSha: string;
  /** API processes per ref (--load-processes), on one database, the connections split. */
  processes: number;
  /** --load-from-sources: both servers ran from their sources (tsx). */
  fromSources: boolean;
  /** Uncommitted changes in the current tree when it ran. */
  currentDirty: boolean;
  roundSeconds: number;
  rounds: Round[];
  rows: Row[];
  /** Median of the per-round ratios current / baseline. */
  vsBaseline: Record<Shape, number>;
  /** Median of the per-round ratios hot / spread. */
  hotVsSpread: Record<Side, number>;
  loadAverage: [number, number];
  /** --load-routes: each route alone on each server, after the rounds. */
  routes: RouteCpu[];
}

const median = (values: readonly number[]): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const medianOrNull = (values: readonly (number | null)[]): number | null => {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : median(known);
};

/** The mix's requests; collects to tagIds[0] (hot) or round-robin over all (spread). */
function routes(target: Target, shape: Shape, domain: string) {
  const auth = { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' };
  let next = 0;
  const list = { method: 'GET' as const, path: '/v1/partners/merchant?limit=20', headers: auth };
  const events = {
    method: 'GET' as const,
    path: `/v1/partners/events?merchantId=${target.hotMerchantId}&limit=50`,
    headers: auth,
  };
  const collect = {
    method: 'POST' as const,
    path: '/v1/collect',
    headers: { 'content-type': 'application/json' },
    setupRequest: (r: object) => {
      const tagId = shape === 'hot' ? target.tagIds[0] : target.tagIds[next++ % target.tagIds.length];
      const batch = Array.from({ length: 5 }, () => ({
        id: randomUUID(),
        event_name: 'page_view',
        data: { path: '/p' },
      }));
      return { ...r, body: JSON.stringify({ tagId, events: batch }) };
    },
  };
  const create = {
    method: 'POST' as const,
    path: '/v1/partners/merchant',
    headers: auth,
    setupRequest: (r: object) => ({
      ...r,
      headers: { ...auth, 'idempotency-key': randomUUID() },
      body: JSON.stringify({ name: 'Load' }),
    }),
  };
  const generate = {
    method: 'POST' as const,
    path: '/v1/partners/tag/generate',
    headers: auth,
    body: JSON.stringify({ merchantId: target.hotMerchantId, domain }),
  };
  return {
    'GET merchants': list,
    'GET events': events,
    'POST collect': collect,
    'POST merchant': create,
    'POST tag/generate': generate,
  };
}
type RouteName = keyof ReturnType<typeof routes>;
const ROUTE_NAMES: RouteName[] = ['GET merchants', 'GET events', 'POST collect', 'POST merchant', 'POST tag/generate'];

/** The loadtest's cycle of ten requests per connection. */
function mix(target: Target, shape: Shape, domain: string) {
  const r = routes(target, shape, domain);
  const [list, collect, events] = [r['GET merchants'], r['POST collect'], r['GET events']];
  return [list, collect, events, list, collect, r['POST merchant'], events, collect, list, r['POST tag/generate']];
}

/** One route alone (hot shape) at 64 connections: CPU per request by route. */
async function routeAlone(target: Target, route: RouteName, seconds: number, domain: string): Promise<RouteCpu> {
  const pid = target.server.process.pid;
  const cpuBefore = processCpuMs(pid);
  const pgBefore = commandCpuMs('postgres');
  const result = await autocannon({
    url: target.server.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [routes(target, 'hot', domain)[route]],
    timeout: 10,
  });
  const total = result.requests.total;
  return {
    side: target.side,
    route,
    rps: result.requests.average,
    p50: result.latency.p50,
    serverCpuUs: cpuPerRequest(cpuBefore, processCpuMs(pid), total),
    pgCpuUs: cpuPerRequest(pgBefore, commandCpuMs('postgres'), total),
  };
}

/** The CPU (ms) of the PostgreSQL backends serving `servers`' connections, by backend pid. */
async function backendsOf(ctx: BenchContext, servers: Child[]): Promise<Map<number, number> | null> {
  const port = Number(new URL(ctx.url).port || 5432);
  const all = new Map<number, number>();
  for (const server of servers) {
    const cpu = await backendsCpuMs(ctx.raw, server.process.pid, port);
    if (cpu === null) return null;
    for (const [pid, ms] of cpu) all.set(pid, ms);
  }
  return all;
}

async function round(ctx: BenchContext, target: Target, shape: Shape, seconds: number, domain: string): Promise<Round> {
  const servers = [target.server, ...target.extra];
  const cpu = () =>
    servers.reduce<number | null>((sum, s) => {
      const ms = processCpuMs(s.process.pid);
      return sum === null || ms === null ? null : sum + ms;
    }, 0);
  const cpuBefore = cpu();
  const pgBefore = commandCpuMs('postgres');
  const backendsBefore = await backendsOf(ctx, servers);
  // One autocannon per process, the connections split between them, all at once.
  const results = await Promise.all(
    servers.map((server, i) =>
      autocannon({
        url: server.url,
        connections: Math.floor(CONNECTIONS / servers.length) + (i < CONNECTIONS % servers.length ? 1 : 0),
        duration: seconds,
        requests: mix(target, shape, domain),
        timeout: 10,
      }),
    ),
  );
  const total = results.reduce((sum, r) => sum + r.requests.total, 0);
  return {
    side: target.side,
    shape,
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    // Several processes: p50 weighted by their requests, p99 the worst one's.
    p50:
      Math.round((results.reduce((sum, r) => sum + r.latency.p50 * r.requests.total, 0) / Math.max(1, total)) * 10) /
      10,
    p99: Math.max(...results.map((r) => r.latency.p99)),
    requests: total,
    failed: results.reduce((sum, r) => sum + r.errors + r.timeouts + r.non2xx, 0),
    serverCpuUs: cpuPerRequest(cpuBefore, cpu(), total),
    pgCpuUs: cpuPerRequest(pgBefore, commandCpuMs('postgres'), total),
    backendsCpuUs: cpuPerRequest(0, backendsCpuDelta(backendsBefore, await backendsOf(ctx, servers)), total),
  };
}

export const load: Section<LoadResult> = {
  title: 'Mixed load against a baseline ref',
  async run(ctx) {
    const repo = path.resolve(BENCH_DIR, '..');
    const baselineRef = ctx.settings.baselineRef ?? LOAD_BASELINE_REF;
    const { dir, sha: baselineSha } = worktreeFor(repo, baselineRef);
    // --current-ref: "this tree" is that ref's worktree too (the shared working tree holds others' edits).
    const current = ctx.settings.currentRef ? worktreeFor(repo, ctx.settings.currentRef) : undefined;
    const currentSha = current?.sha ?? git(repo, 'rev-parse', 'HEAD');
    const currentDirty =
      current === undefined && git(repo, 'status', '--porcelain', '--untracked-files=no', '--', 'packages').length > 0;
    const stamp = runStamp();
    const loadStart = (await import('node:os')).loadavg()[0] ?? 0;
    const seconds = ctx.settings.loadSeconds;
    const roundCount = ctx.settings.loadRounds ?? (ctx.settings.quick ? 2 : 3);
    const targets: Target[] = [];
    try {
      targets.push(
        await startTarget(
          ctx,
          'current',
          path.join(current?.dir ?? repo, 'packages/server'),
          stamp,
          current === undefined,
        ),
      );
      targets.push(await startTarget(ctx, 'baseline', path.join(dir, 'packages/server'), stamp));
      const domainOf = (t: Target) => `load-${t.side}-${stamp.slice(-6)}.partner-bench.com`;
      // Warm-up: every server and shape once (V8 sizes its heap, the plans are cached).
      const warm = Math.max(1, Math.round(seconds / 3));
      for (const t of targets)
        for (const shape of ['hot', 'spread'] as const) await round(ctx, t, shape, warm, domainOf(t));
      const rounds: Round[] = [];
      const order: [number, Shape][] = [
        [0, 'hot'],
        [1, 'hot'],
        [0, 'spread'],
        [1, 'spread'],
      ];
      for (let r = 0; r < roundCount; r++) {
        // The turning order: each run takes a different place in each round.
        const turned = [...order.slice(r % order.length), ...order.slice(0, r % order.length)];
        for (const [i, shape] of turned) {
          const t = targets[i] as Target;
          const result = await round(ctx, t, shape, seconds, domainOf(t));
          log(
            `load: round ${r + 1} ${t.side} ${shape}: ${int(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms${result.failed ? `, ${result.failed} FAILED` : ''}`,
          );
          rounds.push(result);
        }
      }
      const routeRuns: RouteCpu[] = [];
      if (ctx.settings.loadRoutes) {
        const routeSeconds = Math.max(2, Math.round(seconds / 3));
        for (const route of ROUTE_NAMES) {
          for (const t of targets) {
            const run = await routeAlone(t, route, routeSeconds, domainOf(t));
            log(
              `load: ${t.side} ${route} alone: ${int(run.rps)} req/s, server ${int(run.serverCpuUs ?? Number.NaN)} µs/req`,
            );
            routeRuns.push(run);
          }
        }
      }
      const failed = rounds.reduce((sum, r) => sum + r.failed, 0);
      if (failed > 0) throw new Error(`load: ${failed} requests failed (errors, timeouts or non-2xx)`);
      const pick = (side: Side, shape: Shape) => rounds.filter((r) => r.side === side && r.shape === shape);
      const rows: Row[] = [];
      for (const side of ['current', 'baseline'] as const) {
        for (const shape of ['hot', 'spread'] as const) {
          const rs = pick(side, shape);
          rows.push({
            side,
            shape,
            rps: median(rs.map((r) => r.rps)),
            p50: median(rs.map((r) => r.p50)),
            p99: median(rs.map((r) => r.p99)),
            serverCpuUs: medianOrNull(rs.map((r) => r.serverCpuUs)),
            pgCpuUs: medianOrNull(rs.map((r) => r.pgCpuUs)),
            backendsCpuUs: medianOrNull(rs.map((r) => r.backendsCpuUs)),
          });
        }
      }
      const perRound = (a: Round[], b: Round[]) => median(a.map((x, i) => x.rps / (b[i]?.rps ?? Number.NaN)));
      return {
        baselineRef,
        baselineSha,
        currentSha,
        currentDirty,
        fromSources: ctx.settings.loadFromSources,
        processes: ctx.settings.loadProcesses,
        roundSeconds: seconds,
        rounds,
        rows,
        vsBaseline: {
          hot: perRound(pick('current', 'hot'), pick('baseline', 'hot')),
          spread: perRound(pick('current', 'spread'), pick('baseline', 'spread')),
        },
        hotVsSpread: {
          current: perRound(pick('current', 'hot'), pick('current', 'spread')),
          baseline: perRound(pick('baseline', 'hot'), pick('baseline', 'spread')),
        },
        loadAverage: [loadStart, (await import('node:os')).loadavg()[0] ?? 0],
        routes: routeRuns,
      };
    } finally {
      for (const t of targets) {
        for (const more of t.extra) await more.stop().catch(() => {});
        await t.server.stop().catch(() => {});
        await t.dropDatabase().catch(() => {});
      }
    }
  },
  report(r) {
    const cpu = (v: number | null) => (v === null ? 'n/a' : `${int(v)} µs`);
    const base = `${r.baselineRef} (${r.baselineSha.slice(0, 7)})`;
    return [
      '## Mixed load against a baseline ref (load)',
      '',
      `The loadtest's mix (per cycle 3 merchant lists, 2 event lists, 3 collects of 5 events, 1 merchant create, 1 tag generate), ${CONNECTIONS} connections${r.processes > 1 ? ` split over ${r.processes} API processes per ref on one database (p50 weighted by requests, p99 the worst process's, CPU of all processes)` : ''}, this tree (${r.currentSha.slice(0, 7)}${r.currentDirty ? ' + uncommitted changes' : ''}) against ${base}, each server ${r.fromSources ? 'from its sources through tsx (--load-from-sources, as pnpm loadtest)' : 'as its pnpm start runs it (the build, or its sources through tsx)'} on a fresh database; ${r.rounds.length / 4} rounds of ${r.roundSeconds} s per row in a turning order; load average ${r.loadAverage[0].toFixed(2)} -> ${r.loadAverage[1].toFixed(2)}. hot: every collect to one merchant's tag; spread: collects over ${SPREAD_MERCHANTS} merchants. Ratios are medians of per-round ratios.`,
      '',
      '| server | collects | req/s | p50 | p99 | server CPU / req | its backends CPU / req | every postgres CPU / req |',
      '|---|---|---|---|---|---|---|---|',
      ...r.rows.map(
        (row) =>
          `| ${row.side === 'current' ? 'this tree' : base} | ${row.shape} | ${int(row.rps)} | ${row.p50} ms | ${row.p99} ms | ${cpu(row.serverCpuUs)} | ${cpu(row.backendsCpuUs)} | ${cpu(row.pgCpuUs)} |`,
      ),
      '',
      `this tree / baseline: hot ${ratio(r.vsBaseline.hot)}, spread ${ratio(r.vsBaseline.spread)}; hot / spread: this tree ${ratio(r.hotVsSpread.current)}, baseline ${ratio(r.hotVsSpread.baseline)}.`,
      '',
      `Rounds (req/s): ${r.rounds.map((x) => `${x.side === 'current' ? 'cur' : 'base'}-${x.shape} ${int(x.rps)}`).join(', ')}.`,
      '',
      ...(r.routes.length === 0
        ? []
        : [
            '### Each route alone (--load-routes)',
            '',
            '| route | server | req/s | p50 | server CPU / req | postgres CPU / req |',
            '|---|---|---|---|---|---|',
            ...r.routes.map(
              (x) =>
                `| ${x.route} | ${x.side === 'current' ? 'this tree' : base} | ${int(x.rps)} | ${x.p50} ms | ${cpu(x.serverCpuUs)} | ${cpu(x.pgCpuUs)} |`,
            ),
            '',
          ]),
    ];
  },
  targets(r) {
    return [
      {
        what: `mixed load, this tree / ${r.baselineRef} (hot row, req/s)`,
        target: `>= ${TARGET_VS_BASELINE}x`,
        value: ratio(r.vsBaseline.hot),
        met: r.vsBaseline.hot >= TARGET_VS_BASELINE,
      },
      {
        what: 'mixed load, hot merchant / spread over 100 (req/s)',
        target: `>= ${TARGET_HOT_VS_SPREAD}x`,
        value: ratio(r.hotVsSpread.current),
        met: r.hotVsSpread.current >= TARGET_HOT_VS_SPREAD,
      },
    ];
  },
};
