/**
 * stats: the statistics on ClickHouse (issue 55). The events reach a stats API server of its own
 * (fresh DATA_DIR, chDB) one of two ways: COPYed into PostgreSQL and brought in by the server's
 * start-up load (timed), or with --seed-clickhouse (and from 50M events) inserted straight into
 * its chDB by the bench. With the server stopped, the bench opens that chDB: storage, and the
 * exact answers by GROUP BY over the raw events (timed). Then, through the HTTP API, each shape's
 * p50/p95, every answer compared with the exact one (issues 52 and 53's visit metrics, filtered
 * channels, funnel and attribution once every merchant has 4 goals); ingestion with statistics on
 * against off, and with the enrichment (user agent, country) against without;
 * `POST /e` alone and beside 8 clients reading stats; at 10M, the statistics of 08df871 on the
 * same events (lib/stats-baseline.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Child } from '../lib/children.js';
import {
  type Clickhouse,
  markLoaded,
  openStatsDir,
  prepareStatsDir,
  type Storage,
  settleMerges,
  storageOf,
} from '../lib/clickhouse.js';
import { seedClickhouse } from '../lib/clickhouse-seed.js';
import { apiServer, type BenchContext, freshDataDir, removeDataDir } from '../lib/context.js';
import { request, requestJson } from '../lib/http.js';
import { log } from '../lib/log.js';
import { int, type Latency, latency, ms, ratio, since } from '../lib/stats.js';
import {
  type Answer,
  answerOf,
  apiPath,
  Checker,
  type Dates,
  datesNow,
  GOALS,
  SHAPES,
  type Shape,
  type ShapeKey,
  truthOf,
} from '../lib/stats-answers.js';
import { type BaselineResult, runStatsBaseline, STATS_BASELINE_REF } from '../lib/stats-baseline.js';
import {
  type CollectorBesideReads,
  type IngestResult,
  measureCollectorBesideReads,
  measureIngest,
} from '../lib/stats-writes.js';
import type { Section, TargetCheck } from './types.js';

interface ShapeResult {
  key: ShapeKey;
  label: string;
  target: boolean;
  /** Issues 52 and 53's p95 target of the shape, if it has one of its own. */
  p95Ms?: number | undefined;
  /** Measured with the merchants' 4 goals (GOALS) in place. */
  goals: boolean;
  /** Through the HTTP API, merchants in turn, after a warm-up. */
  api: Latency;
  /** The exact answer by GROUP BY over the raw events in the bench's chDB (a tenth of the requests, at least 5). */
  raw: Latency;
}

export interface StatsResult {
  events: number;
  merchants: number;
  seed: { into: 'postgres' | 'clickhouse'; seconds: number };
  /** PostgreSQL seed: the server's start-up load until every merchant's 90-day summary equals PostgreSQL's count. */
  load: { seconds: number; eventsPerSecond: number } | null;
  /** Waited for ClickHouse's merges of `events` before the storage and the exact answers. */
  mergesSeconds: number;
  storage: Storage;
  shapes: ShapeResult[];
  compared: number;
  mismatches: string[];
  visitorsMaxError: number;
  visitorsWorst: string;
  ingest: IngestResult;
  collector: CollectorBesideReads;
  baseline: BaselineResult | null;
}

/**
 * Throughput with the enrichment over without, estimated: the `on` runs' wall time per event
 * stored, against it plus `describeVisitor`'s time per call (a new user agent) shared by `batch` events.
 */
const enrichEstimate = (ingest: IngestResult, batch: number) => {
  const perEvent = 1e6 / ingest.onStoredPerSecond;
  return perEvent / (perEvent + ingest.enrichCallMicros.unseen / batch);
};

/** Requests of the GROUP BY per shape: a tenth of the API's, at least 5. */
const rawReps = (reps: number) => Math.max(5, Math.round(reps / 10));

const P95_MS = (events: number) => (events >= 100_000_000 ? 100 : 50);
const STORAGE_MB_PER_MILLION = 40;
const VISITORS_ERROR = 0.01;
const INGEST_RATIO = 0.9;
const ENRICH_RATIO = 0.9;
const COLLECTOR_P99_RATIO = 1.1;

/**
 * With the stats server stopped: waits for merges, reads the storage, and computes every
 * merchant's exact answer per shape (kept for the comparisons), timing `rawReps` of them.
 */
async function truthPhase(ctx: BenchContext, clickhouse: Clickhouse, d: Dates) {
  const merges = await settleMerges(clickhouse, 600_000);
  const storage = await storageOf(clickhouse);
  log(
    `  stats: ${int(storage.rows)} events in ${storage.parts} parts, ${(storage.bytes / 2 ** 20).toFixed(1)} MB (${storage.mbPerMillion.toFixed(1)} MB per million, projections included)`,
  );
  const truths = new Map<string, Answer>();
  const rawTimes = new Map<ShapeKey, number[]>();
  for (const shape of SHAPES) {
    const times: number[] = [];
    // Every merchant once (the answers compared), then the timed requests, merchants in turn.
    const n = ctx.merchants.length + rawReps(ctx.settings.reps);
    for (let i = 0; i < n; i++) {
      const m = i % ctx.merchants.length;
      const started = process.hrtime.bigint();
      const answer = await truthOf(clickhouse, shape, ctx.merchants[m]?.merchantId as string, d);
      if (i >= ctx.merchants.length) times.push(since(started));
      else truths.set(`${shape.key}|${m}`, answer);
    }
    rawTimes.set(shape.key, times);
  }
  return { merges, storage, truths, rawTimes };
}

/**
 * Each shape through the API, merchants in turn after a warm-up; every answer compared with the
 * exact one. `goals`: each merchant's GOALS' ids (the funnel's steps).
 */
async function apiPhase(
  ctx: BenchContext,
  server: Child,
  d: Dates,
  truths: Map<string, Answer>,
  check: Checker,
  shapes: readonly Shape[],
  goals: ReadonlyMap<string, string[]> = new Map(),
) {
  const out = new Map<ShapeKey, Latency>();
  const warmup = 3;
  for (const shape of shapes) {
    const times: number[] = [];
    for (let i = 0; i < ctx.settings.reps + warmup; i++) {
      const m = i % ctx.merchants.length;
      const merchantId = ctx.merchants[m]?.merchantId as string;
      const started = process.hrtime.bigint();
      const res = await request(`${server.url}${apiPath(shape, merchantId, d, goals.get(merchantId))}`, {
        headers: ctx.auth,
      });
      const elapsed = since(started);
      if (res.status !== 200) throw new Error(`stats ${shape.key}: ${res.status} ${res.body.slice(0, 300)}`);
      if (i >= warmup) times.push(elapsed);
      check.compare(`${shape.key} #${m}`, answerOf(shape, res.body), truths.get(`${shape.key}|${m}`) as Answer);
    }
    out.set(shape.key, latency(times));
  }
  return out;
}

/** Every merchant's GOALS, created through the API in order: their ids per merchant. */
async function createGoals(ctx: BenchContext, server: Child): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const { merchantId } of ctx.merchants) {
    const ids: string[] = [];
    for (const goal of GOALS) {
      const created = await requestJson<{ goalId: string }>(`${server.url}/v1/partners/merchant/${merchantId}/goals`, {
        method: 'POST',
        headers: ctx.auth,
        body: goal,
        expect: 201,
      });
      ids.push(created.goalId);
    }
    out.set(merchantId, ids);
  }
  return out;
}

/** PostgreSQL's count per merchant, then the server started on an empty store: its start-up load, timed. */
async function loadThroughServer(
  ctx: BenchContext,
  dataDir: string,
  d: Dates,
): Promise<{ server: Child; seconds: number }> {
  const counts = new Map<string, number>();
  for (const m of ctx.merchants) {
    const [row] = await ctx.raw`select count(*)::int as n from events where merchant_id = ${m.merchantId}::uuid`;
    counts.set(m.merchantId, Number(row?.n));
  }
  const started = process.hrtime.bigint();
  const server = await ctx.spawn(await apiServer(ctx.settings, ctx.url, 'stats API server', { dataDir }));
  const q = (merchantId: string) =>
    new URLSearchParams({ merchantId, startDate: d.start90, endDate: d.last, timezone: 'UTC' });
  const waiting = new Set(counts.keys());
  const deadline = Date.now() + Math.max(600_000, [...counts.values()].reduce((a, b) => a + b, 0) / 5);
  while (waiting.size > 0) {
    for (const merchantId of [...waiting]) {
      const res = await request(`${server.url}/v1/partners/stats/summary?${q(merchantId)}`, { headers: ctx.auth });
      // A 503 says retry shortly (a database slow to answer on a loaded machine): asked again.
      if (res.status === 503) continue;
      if (res.status !== 200) throw new Error(`stats summary during the load: ${res.status} ${res.body.slice(0, 200)}`);
      if ((JSON.parse(res.body) as { totals: { events: number } }).totals.events === counts.get(merchantId)) {
        waiting.delete(merchantId);
      }
    }
    if (waiting.size === 0) break;
    if (Date.now() > deadline)
      throw new Error(`stats: the start-up load did not finish (${waiting.size} merchants left)`);
    await sleep(250);
  }
  return { server, seconds: since(started) / 1000 };
}

export const statsSection: Section<StatsResult> = {
  title: 'Statistics',
  async run(ctx) {
    const { settings } = ctx;
    const perMerchant = Math.max(ctx.perMerchant(), Math.floor(settings.largeEvents / ctx.merchants.length));
    const events = perMerchant * ctx.merchants.length;
    const ids = ctx.merchants.map((m) => m.merchantId);
    const dataDir = freshDataDir('stats');
    // TRUST_PROXY=1: the enrichment's runs give each request an address (X-Forwarded-For).
    const statsServer = async () => {
      const spec = await apiServer(settings, ctx.url, 'stats API server', { dataDir });
      return ctx.spawn({ ...spec, env: { ...spec.env, TRUST_PROXY: '1' } });
    };
    let d = datesNow();
    let seed: StatsResult['seed'];
    let load: StatsResult['load'] = null;
    let server: Child;
    let truth: Awaited<ReturnType<typeof truthPhase>>;
    if (settings.seedClickhouse) {
      const clickhouse = await openStatsDir(dataDir, ctx.statsDatabase);
      try {
        const [row] = await ctx.raw`select livemode from partners where id = ${ctx.partner.partnerId}::uuid`;
        const seeded = await seedClickhouse(clickhouse, ids, perMerchant, row?.livemode !== false);
        // As the server's start-up load marks a store it has filled: it then loads nothing.
        await markLoaded(clickhouse);
        seed = { into: 'clickhouse', seconds: seeded.seconds };
        d = datesNow();
        truth = await truthPhase(ctx, clickhouse, d);
      } finally {
        await clickhouse.close();
      }
      server = await statsServer();
    } else {
      const seeded = await ctx.seedTo(perMerchant, 'seed');
      seed = { into: 'postgres', seconds: seeded ? seeded.seconds + seeded.vacuumSeconds : 0 };
      d = datesNow();
      // An empty store, not marked loaded: the server's start-up load brings the seed in.
      await prepareStatsDir(dataDir, ctx.statsDatabase, { loaded: false });
      const loaded = await loadThroughServer(ctx, dataDir, d);
      load = { seconds: loaded.seconds, eventsPerSecond: events / loaded.seconds };
      log(`  stats: the start-up load took ${loaded.seconds.toFixed(1)} s (${int(load.eventsPerSecond)} events/s)`);
      // chDB opens a directory in one process at a time: the server stops while the bench reads it.
      await loaded.server.stop();
      const clickhouse = await openStatsDir(dataDir, ctx.statsDatabase);
      try {
        truth = await truthPhase(ctx, clickhouse, d);
      } finally {
        await clickhouse.close();
      }
      server = await statsServer();
    }
    const check = new Checker();
    let shapes: ShapeResult[];
    let ingest: IngestResult;
    let collector: CollectorBesideReads;
    try {
      // The shapes of issue 55 first, as before goals existed (a summary also counts every goal);
      // then issues 52 and 53's with the merchants' 4 goals.
      const api = await apiPhase(
        ctx,
        server,
        d,
        truth.truths,
        check,
        SHAPES.filter((shape) => !shape.goals),
      );
      const goals = await createGoals(ctx, server);
      const withGoals = await apiPhase(
        ctx,
        server,
        d,
        truth.truths,
        check,
        SHAPES.filter((shape) => shape.goals),
        goals,
      );
      for (const [key, value] of withGoals) api.set(key, value);
      shapes = SHAPES.map((shape) => ({
        key: shape.key,
        label: shape.label,
        target: shape.target,
        p95Ms: shape.p95Ms,
        goals: shape.goals ?? false,
        api: api.get(shape.key) as Latency,
        raw: latency(truth.rawTimes.get(shape.key) ?? []),
      }));
      for (const s of shapes) {
        log(
          `  stats ${s.label}: API p50 ${ms(s.api.p50)} p95 ${ms(s.api.p95)}; GROUP BY over the raw events p50 ${ms(s.raw.p50)}`,
        );
      }
      ingest = await measureIngest(ctx, server);
      collector = await measureCollectorBesideReads(ctx, server, d);
    } finally {
      await server.stop();
      removeDataDir(settings, dataDir);
    }
    if (check.mismatches.length > 0) {
      log(`  stats: *** ${check.mismatches.length} ANSWERS DIFFER FROM THE RAW EVENTS' ***`);
      for (const line of check.mismatches.slice(0, 20)) log(`    ${line}`);
    }
    const baseline = settings.statsBaseline
      ? await runStatsBaseline(ctx, d, (key, m) => truth.truths.get(`${key}|${m}`))
      : null;
    return {
      events,
      merchants: ctx.merchants.length,
      seed,
      load,
      mergesSeconds: truth.merges.seconds,
      storage: truth.storage,
      shapes,
      compared: check.compared,
      mismatches: check.mismatches,
      visitorsMaxError: check.visitorsMaxError,
      visitorsWorst: check.visitorsWorst,
      ingest,
      collector,
      baseline,
    };
  },
  targets(result) {
    const checks: TargetCheck[] = [
      {
        what: `stats: API answers equal the exact ones over the raw events (events, page views, purchases, EUR revenue, top-10 paths, other's events; ${int(result.compared)} answers)`,
        target: 'all equal',
        value: result.mismatches.length === 0 ? 'all equal' : `${result.mismatches.length} differ`,
        met: result.mismatches.length === 0,
      },
      {
        what: 'stats: visitors against uniqExact, largest error',
        target: `<= ${VISITORS_ERROR * 100}%`,
        value: `${(result.visitorsMaxError * 100).toFixed(2)}%`,
        met: result.visitorsMaxError <= VISITORS_ERROR,
      },
    ];
    const p95 = P95_MS(result.events);
    for (const shape of result.shapes) {
      const limit = shape.target ? p95 : shape.p95Ms;
      if (limit === undefined) continue;
      checks.push({
        what: `stats ${int(result.events)} events, ${shape.label}${shape.goals ? ' (4 goals)' : ''}: API p95`,
        target: `<= ${limit} ms`,
        value: `${ms(shape.api.p95)} (p50 ${ms(shape.api.p50)})`,
        met: shape.api.p95 <= limit,
      });
    }
    checks.push(
      {
        what: `stats: ClickHouse storage per million events, projections included (${int(result.storage.rows)} events, ${result.storage.parts} parts)`,
        target: `<= ${STORAGE_MB_PER_MILLION} MB`,
        value: `${result.storage.mbPerMillion.toFixed(1)} MB`,
        met: result.storage.mbPerMillion <= STORAGE_MB_PER_MILLION,
      },
      result.load
        ? {
            what: "(no target) stats: the server's start-up load of the events stored in PostgreSQL",
            target: '-',
            value: `${int(result.load.eventsPerSecond)} events/s (${result.load.seconds.toFixed(1)} s)`,
            met: null,
          }
        : {
            what: '(no target) stats: the seed straight into ClickHouse',
            target: '-',
            value: `${int(result.events / result.seed.seconds)} events/s (${result.seed.seconds.toFixed(1)} s)`,
            met: null,
          },
    );
    const ingestRatio = result.ingest.onVisiblePerSecond / result.ingest.offStoredPerSecond;
    checks.push(
      {
        what: 'stats: POST /v1/collect with statistics on (until visible in them) / off (STATS=off, until stored)',
        target: `>= ${INGEST_RATIO}x`,
        value: ratio(ingestRatio),
        met: ingestRatio >= INGEST_RATIO,
      },
      {
        what: 'stats: POST /v1/collect with the enrichment (a new browser user agent and address per request) / without (none to parse, loopback), until stored',
        target: `>= ${ENRICH_RATIO}x`,
        value: ratio(result.ingest.enrichedStoredPerSecond / result.ingest.onStoredPerSecond),
        met: result.ingest.enrichedStoredPerSecond / result.ingest.onStoredPerSecond >= ENRICH_RATIO,
      },
      {
        what: "(no target) stats: the same from describeVisitor's µs per call (a new user agent) at 20 events a request (the tag's batches), against the on runs' wall time per event stored",
        target: '-',
        value: ratio(enrichEstimate(result.ingest, 20)),
        met: null,
      },
      {
        what: `stats: /e accept p99 beside ${result.collector.readers} clients reading stats / alone (${result.collector.senders} senders)`,
        target: `<= ${COLLECTOR_P99_RATIO}x (unchanged)`,
        value: `${ratio(result.collector.beside.p99 / result.collector.alone.p99)} (${result.collector.beside.p99.toFixed(1)} / ${result.collector.alone.p99.toFixed(1)} ms)`,
        met: result.collector.beside.p99 / result.collector.alone.p99 <= COLLECTOR_P99_RATIO,
      },
    );
    const b = result.baseline;
    if (b) {
      for (const shape of b.shapes) {
        const ours = result.shapes.find((s) => s.key === shape.key);
        checks.push({
          what: `(no target) stats ${int(b.events)} events, ${shape.label}: ${STATS_BASELINE_REF} p50 / ours p50`,
          target: '-',
          value: ours ? ratio(shape.api.p50 / ours.api.p50) : 'n/a',
          met: null,
        });
      }
      if (b.error) {
        checks.push({
          what: `stats: the ${STATS_BASELINE_REF} baseline`,
          target: 'runs',
          value: `failed: ${b.error}`,
          met: false,
        });
      }
    }
    return checks;
  },
  report(result) {
    const { storage, ingest, collector: c, baseline: b } = result;
    const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
    const lines = [
      `## Statistics on ClickHouse: ${int(result.events)} events, ${result.merchants} merchants`,
      '',
      result.load
        ? `Seeded into PostgreSQL (${result.seed.seconds.toFixed(1)} s with VACUUM), then loaded by the stats server's start-up load in ${result.load.seconds.toFixed(1)} s (${int(result.load.eventsPerSecond)} events/s, timed from its spawn until every merchant's 90-day summary equals PostgreSQL's count).`
        : `Seeded straight into the stats server's chDB (\`INSERT INTO events_in ... SELECT FROM numbers()\`, typed by the server's view; lib/clickhouse-seed.ts) in ${result.seed.seconds.toFixed(1)} s (${int(result.events / result.seed.seconds)} events/s).`,
      '',
      '| shape | API p50 | API p95 | p95 target | GROUP BY over the raw events, p50 / p95 | requests (API / GROUP BY) |',
      '|---|---|---|---|---|---|',
      ...result.shapes.map(
        (s) =>
          `| ${s.label}${s.goals ? ' (4 goals)' : ''} | ${ms(s.api.p50)} | ${ms(s.api.p95)} | ${s.target ? `${P95_MS(result.events)} ms` : s.p95Ms ? `${s.p95Ms} ms` : '-'} | ${ms(s.raw.p50)} / ${ms(s.raw.p95)} | ${s.api.n} / ${s.raw.n} |`,
      ),
      '',
      "API: `GET /v1/partners/stats/...` over HTTP on the stats server, merchants in turn, after 3 warm-up requests. GROUP BY: the same answer over the raw `events` table (no projection: `count()`, `countIf`, `uniqExact(visitor)` per local day, period or path, top 10 and the rest) in the bench's chDB with the server stopped. Every API answer is compared with the exact one of its merchant: events, page views, purchases, EUR revenue, the top 10 paths with their events and the `other` row's events equal; visitors within 1%.",
      '',
      `(4 goals): measured after the shapes above, once each merchant has 4 goals created through the API (${GOALS.map((g) => ('eventName' in g ? g.eventName : g.pathPattern)).join(', ')}; a summary then also counts each goal). Visit metrics: visits begun in the range equal, bounce rate, duration and views per visit within 1e-9 of the exact sums' quotients. Channels: page views per channel of the visits from DE, events equal. Funnel: the 4 goals as steps, \`window=P1D\`, each step's visitors equal to \`windowFunnel\` over the raw events. Attribution: \`model=first_touch&dimension=channel\`, per channel visitors, purchases and EUR revenue equal to each visitor's first visit by \`min((visit_start, event_time))\`.`,
      '',
      `Answers compared: ${int(result.compared)}; differing: **${result.mismatches.length}**; visitors' largest error ${(result.visitorsMaxError * 100).toFixed(2)}% (${result.visitorsWorst}).`,
    ];
    if (result.mismatches.length > 0) {
      lines.push(
        '',
        '**The API and the raw events disagree:**',
        '',
        ...result.mismatches.slice(0, 20).map((m) => `- ${m}`),
      );
    }
    lines.push(
      '',
      `### Storage (after ${result.mergesSeconds.toFixed(0)} s waiting for merges)`,
      '',
      '| what | rows | MB | MB per million events |',
      '|---|---|---|---|',
      `| \`events\`, ${storage.parts} active parts, projections included | ${int(storage.rows)} | ${mb(storage.bytes)} | ${storage.mbPerMillion.toFixed(1)} |`,
      ...storage.projections.map(
        (p) =>
          `| projection \`${p.name}\` alone | ${int(p.rows)} | ${mb(p.bytes)} | ${(p.bytes / 2 ** 20 / (storage.rows / 1e6)).toFixed(1)} |`,
      ),
      '',
      "`system.parts` (active, `events`): a part's bytes on disk include its projections' (`system.projection_parts`, listed alone).",
      '',
      `### Ingestion with statistics: ${int(ingest.events)} events through \`POST /v1/collect\`, ${ingest.batch} x ${ingest.concurrency}, medians of ${ingest.rounds}`,
      '',
      '| process | until stored | until visible in the statistics |',
      '|---|---|---|',
      `| statistics on (the stats server) | ${int(ingest.onStoredPerSecond)} events/s | ${int(ingest.onVisiblePerSecond)} events/s |`,
      `| STATS=off (the write path alone) | ${int(ingest.offStoredPerSecond)} events/s | - |`,
      `| on (until visible) / off | | **${ratio(ingest.onVisiblePerSecond / ingest.offStoredPerSecond)}** |`,
      '',
      `| statistics on, enriched: a new browser user agent and X-Forwarded-For address per request | ${int(ingest.enrichedStoredPerSecond)} events/s | ${int(ingest.enrichedVisiblePerSecond)} events/s |`,
      `| enriched / on | **${ratio(ingest.enrichedStoredPerSecond / ingest.onStoredPerSecond)}** | ${ratio(ingest.enrichedVisiblePerSecond / ingest.onVisiblePerSecond)} |`,
      '',
      `Each round until stored (events/s, in round order; the runs rotate on, off, enriched): on ${ingest.perRound.on.map(int).join(' / ')}; off ${ingest.perRound.off.map(int).join(' / ')}; enriched ${ingest.perRound.enriched.map(int).join(' / ')}.`,
      '',
      '"Until visible": the merchant\'s `stats_outbox` rows gone (sent to ClickHouse) and the stats summary counting every event.',
      `The enrichment (issue 52; \`describeVisitor\`: bowser and isbot on the user agent, the country of the address from the mmdb): the "on" runs send no user agent from a loopback address (nothing parsed, nothing found), the enriched runs a user agent the server never saw (its 10,000 kept parses never answer) and a public address (the stats server runs with \`TRUST_PROXY=1\`), one per request of ${ingest.batch} events, every event then stored with its client. In the bench's process \`describeVisitor\` took ${ingest.enrichCallMicros.unseen.toFixed(1)} µs a call with a new user agent, ${ingest.enrichCallMicros.kept.toFixed(2)} µs with a kept one: ${((ingest.enrichCallMicros.unseen / ingest.batch) * 1000).toFixed(0)} ns an event at ${ingest.batch} events a request, ${(ingest.enrichCallMicros.unseen / 20).toFixed(2)} µs at 20 (the tag's batches), against ${(1e6 / ingest.onStoredPerSecond).toFixed(1)} µs of wall time an event stored here.`,
      '',
      `### \`POST /e\` beside ${c.readers} clients reading stats (${c.senders} senders x 20 events, ${c.seconds} s, means of the rounds)`,
      '',
      '| run | accepted events/s | p50 | p99 |',
      '|---|---|---|---|',
      `| alone | ${int(c.alone.perSecond)} | ${c.alone.p50.toFixed(1)} ms | ${c.alone.p99.toFixed(1)} ms |`,
      `| beside ${c.readers} readers | ${int(c.beside.perSecond)} | ${c.beside.p50.toFixed(1)} ms | ${c.beside.p99.toFixed(1)} ms |`,
      `| beside / alone | ${ratio(c.beside.perSecond / c.alone.perSecond)} | ${ratio(c.beside.p50 / c.alone.p50)} | ${ratio(c.beside.p99 / c.alone.p99)} |`,
      '',
      `The readers loop over the three target shapes and the merchants: ${int(c.reads.perSecond)} reads/s, p50 ${ms(c.reads.p50)}, p95 ${ms(c.reads.p95)} while the senders ran.`,
    );
    if (b) {
      lines.push('', `### Against ${b.ref} (${b.sha.slice(0, 7)}: aggregates in PostgreSQL), same events`, '');
      if (b.error) lines.push(`Failed: ${b.error}`);
      lines.push(
        '| shape | 08df871 p50 / p95 | ours p50 / p95 | 08df871 p50 / ours p50 |',
        '|---|---|---|---|',
        ...b.shapes.map((s) => {
          const ours = result.shapes.find((o) => o.key === s.key);
          return `| ${s.label} | ${ms(s.api.p50)} / ${ms(s.api.p95)} | ${ours ? `${ms(ours.api.p50)} / ${ms(ours.api.p95)}` : 'n/a'} | ${ours ? ratio(s.api.p50 / ours.api.p50) : 'n/a'} |`;
        }),
        '',
        `Its compiled server on a database of its own, the same seed (seeded in ${b.seedSeconds.toFixed(1)} s), queued in \`stat_pending\` in ranges of 500 events per merchant and folded by its own loop in ${b.foldSeconds.toFixed(1)} s (${b.foldMsPer1k.toFixed(1)} ms per 1k events). Its answers against our exact ones (no target): ${int(b.compared)} compared, ${b.mismatches.length} differing, visitors' largest error ${(b.visitorsMaxError * 100).toFixed(2)}%.`,
      );
    }
    lines.push('');
    return lines;
  },
};
