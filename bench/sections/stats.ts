/**
 * stats: `GET /v1/partners/stats/{timeseries,summary,breakdown}` (read from the 15-minute
 * aggregates) against the same answers computed by `GROUP BY` over `events` (prepared), each
 * answer checked equal; at the small scale, then grown to the large one (growth). The seed COPYs
 * events past `storeEvents`, so the section queues their `seq` ranges in `stat_pending` and runs
 * the server's fold (`foldPendingStats`), timed: the fold's cost per 1k events. Last, batches
 * through `POST /v1/collect` timed until stored and until folded.
 */

import { foldPendingStats, openDatabase } from '@partner/server/bench';
import { apiServer, type BenchContext } from '../lib/context.js';
import { request } from '../lib/http.js';
import { log } from '../lib/log.js';
import { type SeedMerchant, windowEnd } from '../lib/seed.js';
import { int, type Latency, latency, ms, ratio, since } from '../lib/stats.js';
import { mark, type Section, type TargetCheck } from './types.js';

const DAY_MS = 86_400_000;
const ymd = (instant: number) => new Date(instant).toISOString().slice(0, 10);

/** Events per `stat_pending` range when the seed is folded: a collector batch's size. */
const RANGE_EVENTS = 500;

interface Totals {
  events: number;
  visitors: number;
  pageviews: number;
  purchases: number;
}

type ShapeKey = 'timeseries90d' | 'summary30d' | 'paths30d' | 'timeseries90dNewYork' | 'paths30dKolkata';

interface ShapeResult {
  key: ShapeKey;
  label: string;
  /** The API alone, merchants in turn. */
  api: Latency;
  /** The API right after a GROUP BY of the same merchant (its aggregates evicted from shared buffers). */
  afterScan: Latency;
  groupBy: Latency;
  /** GROUP BY p50 / API p50: how many times faster the aggregates answer. */
  speedup: number;
}

interface ScaleResult {
  events: number;
  /** Seconds to fold the events seeded at this scale (ranges of 500 per merchant, 10 per fold). */
  foldSeconds: number;
  foldedEvents: number;
  /** The fold's wall time per 1,000 seeded events, ms (the API's own fold loop may take some ranges). */
  foldMsPer1k: number;
  shapes: ShapeResult[];
  /** `pg_total_relation_size`, MB: events (its partitions and event_ids) and the aggregates. */
  sizesMb: { events: number; aggregates: number };
}

interface IngestResult {
  events: number;
  batch: number;
  concurrency: number;
  storedSeconds: number;
  foldedSeconds: number;
  storedPerSecond: number;
  foldedPerSecond: number;
  /** The merchant's summary after the run equals a count over its stored events. */
  summaryMatches: boolean;
}

export interface StatsResult {
  /** Null when the events were already past the small scale (another section seeded first). */
  small: ScaleResult | null;
  large: ScaleResult;
  /** Every disagreement between the API and the GROUP BY (empty: all answers equal). */
  mismatches: string[];
  /** Answers compared (API against GROUP BY). */
  compared: number;
  /** The largest |API visitors / count(distinct muid) - 1| over every compared answer. */
  visitorsMaxError: number;
  /** Where the largest visitors error was: the answer, the estimate against the exact count. */
  visitorsWorst: string;
  ingest: IngestResult;
}

interface Dates {
  start90: string;
  start30: string;
  last: string;
  /** Instants: the 90-day window, the 30 days before the last 30, the last 30. */
  from90: Date;
  from60: Date;
  from30: Date;
  end: Date;
}

function datesNow(): Dates {
  const end = windowEnd();
  return {
    start90: ymd(end - 90 * DAY_MS),
    start30: ymd(end - 30 * DAY_MS),
    last: ymd(end - DAY_MS),
    from90: new Date(end - 90 * DAY_MS),
    from60: new Date(end - 60 * DAY_MS),
    from30: new Date(end - 30 * DAY_MS),
    end: new Date(end),
  };
}

/** `extra`: measured and compared, without targets (a zone whose midnight is not UTC's reads hours). */
const SHAPES: Array<{ key: ShapeKey; label: string; extra?: boolean }> = [
  { key: 'timeseries90d', label: '90-day daily timeseries' },
  { key: 'summary30d', label: '30-day summary, compare=previous' },
  { key: 'paths30d', label: 'top-10 path breakdown, 30 days' },
  { key: 'timeseries90dNewYork', label: '90-day daily timeseries, America/New_York (extra)', extra: true },
  // Its range's edges are half-hours: read from the page views (breakdown.ts dimensionRows).
  { key: 'paths30dKolkata', label: 'top-10 path breakdown, 30 days, Asia/Kolkata (extra)', extra: true },
];

const NEW_YORK = 'America/New_York';
const KOLKATA = 'Asia/Kolkata';
const ZONES: Partial<Record<ShapeKey, string>> = { timeseries90dNewYork: NEW_YORK, paths30dKolkata: KOLKATA };

function apiPath(key: ShapeKey, merchantId: string, d: Dates): string {
  const q = new URLSearchParams({ merchantId, timezone: ZONES[key] ?? 'UTC' });
  if (key === 'timeseries90d' || key === 'timeseries90dNewYork') {
    q.set('startDate', d.start90);
    q.set('endDate', d.last);
    q.set('interval', 'day');
    return `/v1/partners/stats/timeseries?${q}`;
  }
  q.set('startDate', d.start30);
  q.set('endDate', d.last);
  if (key === 'summary30d') {
    q.set('compare', 'previous');
    return `/v1/partners/stats/summary?${q}`;
  }
  q.set('dimension', 'path');
  q.set('limit', '10');
  return `/v1/partners/stats/breakdown?${q}`;
}

type Row = Record<string, unknown>;

/** The same answer by GROUP BY over the events (prepared, as postgres.js tagged templates are). */
function groupBy(ctx: BenchContext, key: ShapeKey, merchantId: string, d: Dates): Promise<Row[]> {
  const { raw } = ctx;
  if (key === 'timeseries90d') {
    return raw`select to_char(date_trunc('day', event_time at time zone 'UTC'), 'YYYY-MM-DD') as day,
        count(*)::int as events, count(distinct muid)::int as visitors,
        (count(*) filter (where event_name = 'PageView'))::int as pageviews,
        (count(*) filter (where event_name = 'Purchase'))::int as purchases
      from events where merchant_id = ${merchantId}::uuid and event_time >= ${d.from90} and event_time < ${d.end}
      group by 1 order by 1`;
  }
  if (key === 'timeseries90dNewYork') {
    return raw`select to_char(date_trunc('day', event_time at time zone ${NEW_YORK}), 'YYYY-MM-DD') as day,
        count(*)::int as events, count(distinct muid)::int as visitors,
        (count(*) filter (where event_name = 'PageView'))::int as pageviews,
        (count(*) filter (where event_name = 'Purchase'))::int as purchases
      from events where merchant_id = ${merchantId}::uuid
        and event_time >= (${d.start90}::date)::timestamp at time zone ${NEW_YORK}
        and event_time < ((${d.last}::date + 1)::timestamp at time zone ${NEW_YORK})
      group by 1 order by 1`;
  }
  if (key === 'summary30d') {
    return raw`select event_time >= ${d.from30} as current,
        count(*)::int as events, count(distinct muid)::int as visitors,
        (count(*) filter (where event_name = 'PageView'))::int as pageviews,
        (count(*) filter (where event_name = 'Purchase'))::int as purchases
      from events where merchant_id = ${merchantId}::uuid and event_time >= ${d.from60} and event_time < ${d.end}
      group by 1`;
  }
  // The top 10 and the `other` row of the rest, as the API answers: one scan, grouped by path and
  // visitor first (each visitor of the rest counted once). The 30 local days of the shape's zone.
  const zone = ZONES[key] ?? 'UTC';
  return raw`with pm as (
      select coalesce(raw_data::jsonb->>'path', '(none)') collate "C" as value, muid, count(*) as n
      from events
      where merchant_id = ${merchantId}::uuid and event_name = 'PageView'
        and event_time >= (${d.start30}::date)::timestamp at time zone ${zone}
        and event_time < ((${d.last}::date + 1)::timestamp at time zone ${zone})
      group by 1, 2
    ), per as (
      select value, sum(n)::int as events, count(*)::int as visitors from pm group by 1
    ), top as (
      select value, events, visitors from per order by events desc, value limit 10
    )
    select * from (select value, events, visitors, false as other from top order by events desc, value) t
    union all
    select 'other', (select coalesce(sum(n), 0)::int from pm where value not in (select value from top)),
      (select count(distinct muid)::int from pm where value not in (select value from top)), true`;
}

interface Checker {
  mismatches: string[];
  compared: number;
  visitorsMaxError: number;
  visitorsWorst: string;
}

/** Keeps the largest visitors error, and where it was. */
function visitorsError(check: Checker, where: string, api: number, exact: number): void {
  const error = Math.abs(api / exact - 1);
  if (error <= check.visitorsMaxError) return;
  check.visitorsMaxError = error;
  check.visitorsWorst = `${where}: ${api} against ${exact}`;
}

function sameCounts(check: Checker, where: string, api: Totals, sql: Totals | undefined): void {
  const expected = sql ?? { events: 0, visitors: 0, pageviews: 0, purchases: 0 };
  for (const field of ['events', 'pageviews', 'purchases'] as const) {
    if (api[field] !== expected[field]) {
      check.mismatches.push(`${where}: ${field} API ${api[field]}, GROUP BY ${expected[field]}`);
    }
  }
  if (expected.visitors > 0) {
    visitorsError(check, where, api.visitors, expected.visitors);
  } else if (api.visitors !== 0) {
    check.mismatches.push(`${where}: visitors API ${api.visitors}, GROUP BY 0`);
  }
}

/** Compares the API's body with the GROUP BY's rows; records every disagreement. */
function compare(check: Checker, key: ShapeKey, merchantId: string, body: string, rows: Row[]): void {
  check.compared++;
  const where = `${key} ${merchantId.slice(0, 8)}`;
  const counts = (row: Row | undefined): Totals | undefined =>
    row && {
      events: Number(row.events),
      visitors: Number(row.visitors),
      pageviews: Number(row.pageviews),
      purchases: Number(row.purchases),
    };
  if (key === 'timeseries90d' || key === 'timeseries90dNewYork') {
    const { points } = JSON.parse(body) as { points: Array<Totals & { start: string }> };
    const byDay = new Map(rows.map((row) => [String(row.day), row]));
    if (points.length !== 90) check.mismatches.push(`${where}: ${points.length} points, not 90`);
    for (const point of points) {
      const day = point.start.slice(0, 10);
      sameCounts(check, `${where} ${day}`, point, counts(byDay.get(day)));
      byDay.delete(day);
    }
    if (byDay.size > 0) check.mismatches.push(`${where}: days without a point: ${[...byDay.keys()].join(', ')}`);
  } else if (key === 'summary30d') {
    const answer = JSON.parse(body) as { totals: Totals; previous: { totals: Totals } | null };
    sameCounts(check, `${where} current`, answer.totals, counts(rows.find((row) => row.current === true)));
    if (!answer.previous) check.mismatches.push(`${where}: no previous period`);
    else
      sameCounts(check, `${where} previous`, answer.previous.totals, counts(rows.find((row) => row.current === false)));
  } else {
    type Counted = { value: string; events: number; visitors: number };
    const answer = JSON.parse(body) as { rows: Counted[]; other: Counted | null };
    const top = rows.filter((row) => row.other !== true);
    const rest = rows.find((row) => row.other === true);
    const got = answer.rows.map((row) => `${row.value}=${row.events}`).join(' ');
    const expected = top.map((row) => `${String(row.value)}=${Number(row.events)}`).join(' ');
    if (got !== expected) check.mismatches.push(`${where}: top paths API [${got}], GROUP BY [${expected}]`);
    for (const [i, row] of top.entries()) {
      const exact = Number(row.visitors);
      if (exact > 0) visitorsError(check, `${where} ${String(row.value)}`, answer.rows[i]?.visitors ?? 0, exact);
    }
    const otherEvents = Number(rest?.events ?? 0);
    if ((answer.other?.events ?? 0) !== otherEvents)
      check.mismatches.push(`${where}: other events API ${answer.other?.events ?? 0}, GROUP BY ${otherEvents}`);
    if (Number(rest?.visitors ?? 0) > 0)
      visitorsError(check, `${where} other`, answer.other?.visitors ?? 0, Number(rest?.visitors));
  }
}

async function timedGet(ctx: BenchContext, path: string): Promise<{ ms: number; body: string }> {
  const start = process.hrtime.bigint();
  const res = await request(`${ctx.api.url}${path}`, { headers: ctx.auth });
  const elapsed = since(start);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return { ms: elapsed, body: res.body };
}

/** GROUP BY requests per shape: a full scan per request, so a tenth of the API's (at least 5). */
const groupByReps = (reps: number) => Math.max(5, Math.round(reps / 10));

/**
 * Two phases. Steady: the API alone, merchants in turn (the p50 and p95 the targets read). Then
 * pairs: a GROUP BY, then the API's answer to the same request, compared; that API request is
 * timed apart (`afterScan`), as the scan before it has just read the merchant's events.
 */
async function measureShape(
  ctx: BenchContext,
  check: Checker,
  shape: (typeof SHAPES)[number],
  d: Dates,
): Promise<ShapeResult> {
  const reps = ctx.settings.reps;
  const warmup = 3;
  const api: number[] = [];
  const afterScan: number[] = [];
  const sql: number[] = [];
  const merchantAt = (i: number) => ctx.merchants[i % ctx.merchants.length] as SeedMerchant;
  for (let i = 0; i < reps + warmup; i++) {
    const fromApi = await timedGet(ctx, apiPath(shape.key, merchantAt(i).merchantId, d));
    if (i >= warmup) api.push(fromApi.ms);
  }
  // One untimed GROUP BY first (plans and caches), then the timed pairs.
  for (let i = -1; i < groupByReps(reps); i++) {
    const merchant = merchantAt(i + 1);
    const start = process.hrtime.bigint();
    const rows = await groupBy(ctx, shape.key, merchant.merchantId, d);
    const elapsed = since(start);
    const fromApi = await timedGet(ctx, apiPath(shape.key, merchant.merchantId, d));
    if (i >= 0) {
      sql.push(elapsed);
      afterScan.push(fromApi.ms);
    }
    compare(check, shape.key, merchant.merchantId, fromApi.body, rows);
  }
  const a = latency(api);
  const g = latency(sql);
  return {
    key: shape.key,
    label: shape.label,
    api: a,
    afterScan: latency(afterScan),
    groupBy: g,
    speedup: g.p50 / a.p50,
  };
}

/**
 * Queues every seeded event not yet folded as `stat_pending` ranges (500 events of a merchant each,
 * by `seq`: the seed takes its COPY transaction's numbers, migration 0026), one range per merchant at
 * a time as interleaved collector batches would, and folds them with the server's fold; returns the
 * seconds it took. `folded` holds each merchant's last folded `seq`.
 */
async function foldSeeded(
  ctx: BenchContext,
  db: Parameters<typeof foldPendingStats>[0],
  folded: Map<string, number>,
): Promise<{ seconds: number; events: number }> {
  const ids = ctx.merchants.map((m) => m.merchantId);
  const after = ids.map((id) => folded.get(id) ?? 0);
  const ranges = await ctx.raw`select merchant_id::text as merchant, chunk::int as chunk,
      min(seq)::float8 as first, max(seq)::float8 as last, count(*)::int as n
    from (
      select merchant_id, seq, (row_number() over (partition by merchant_id order by seq) - 1) / ${RANGE_EVENTS} as chunk
      from unnest(${ids}::uuid[], ${after}::bigint[]) as a(merchant, after)
      join events on events.merchant_id = a.merchant and events.seq > a.after
    ) x
    group by 1, 2 order by 2, 1`;
  const start = process.hrtime.bigint();
  let events = 0;
  const chunks = new Map<number, Array<{ merchant: string; first: number; last: number }>>();
  for (const row of ranges) {
    const list = chunks.get(Number(row.chunk)) ?? [];
    list.push({ merchant: String(row.merchant), first: Number(row.first), last: Number(row.last) });
    chunks.set(Number(row.chunk), list);
    events += Number(row.n);
    folded.set(String(row.merchant), Math.max(folded.get(String(row.merchant)) ?? 0, Number(row.last)));
  }
  for (const [, list] of [...chunks].sort((x, y) => x[0] - y[0])) {
    await ctx.raw`insert into stat_pending (merchant_id, first_seq, last_seq)
      select unnest(${list.map((r) => r.merchant)}::uuid[]), unnest(${list.map((r) => r.first)}::bigint[]), unnest(${list.map((r) => r.last)}::bigint[])`;
    // Waits for ranges the API's own fold loop took; returns 0 once every queued range is counted.
    while ((await foldPendingStats(db, ids.length, true)) > 0) {}
  }
  return { seconds: since(start) / 1000, events };
}

async function sizes(ctx: BenchContext): Promise<ScaleResult['sizesMb']> {
  // events is partitioned (0028): its own size is 0, its partitions hold the rows.
  const [row] =
    await ctx.raw`select (select sum(pg_total_relation_size(relid)) from pg_partition_tree('events'))::float8
      + pg_total_relation_size('event_ids')::float8 as events,
    (pg_total_relation_size('stat_buckets') + pg_total_relation_size('stat_dimensions')
      + pg_total_relation_size('stat_revenue'))::float8 as aggregates`;
  return { events: Number(row?.events) / 2 ** 20, aggregates: Number(row?.aggregates) / 2 ** 20 };
}

async function measureScale(
  ctx: BenchContext,
  db: Parameters<typeof foldPendingStats>[0],
  folded: Map<string, number>,
  check: Checker,
  scale: string,
): Promise<ScaleResult> {
  const fold = await foldSeeded(ctx, db, folded);
  await ctx.raw`vacuum (analyze) stat_buckets, stat_dimensions, stat_revenue`;
  const foldMsPer1k = fold.events > 0 ? (fold.seconds * 1e6) / fold.events : Number.NaN;
  log(
    `  stats ${scale}: folded ${int(fold.events)} seeded events in ${fold.seconds.toFixed(1)} s (${foldMsPer1k.toFixed(1)} ms per 1k)`,
  );
  const d = datesNow();
  const shapes: ShapeResult[] = [];
  for (const shape of SHAPES) {
    const result = await measureShape(ctx, check, shape, d);
    shapes.push(result);
    log(
      `  stats ${scale} ${shape.label}: API p50 ${ms(result.api.p50)} p95 ${ms(result.api.p95)} (after a GROUP BY ${ms(result.afterScan.p50)} / ${ms(result.afterScan.p95)}), GROUP BY p50 ${ms(result.groupBy.p50)} (${ratio(result.speedup)} faster)`,
    );
  }
  return {
    events: ctx.perMerchant() * ctx.merchants.length,
    foldSeconds: fold.seconds,
    foldedEvents: fold.events,
    foldMsPer1k,
    shapes,
    sizesMb: await sizes(ctx),
  };
}

/** Batches through `POST /v1/collect`, timed until every event is stored, then until folded. */
async function measureIngest(ctx: BenchContext): Promise<IngestResult> {
  // ctx.api does not fold (bench policy): a process that does, as every process does by default.
  const base = apiServer(ctx.settings, ctx.url, 'API server with the fold');
  const folding = await ctx.spawn({ ...base, env: { ...base.env, STATS_FOLD: 'on' } });
  try {
    return await measureIngestThrough(ctx, folding.url);
  } finally {
    await folding.stop();
  }
}

async function measureIngestThrough(ctx: BenchContext, apiUrl: string): Promise<IngestResult> {
  const merchant = ctx.spareMerchant;
  const batch = 500;
  const concurrency = 4;
  const batches = Math.max(1, Math.ceil(ctx.settings.ingestEvents / batch));
  const total = batches * batch;
  const now = Date.now();
  const prefix = `stats${now}`;
  const makeBatch = (b: number) =>
    Array.from({ length: batch }, (_, i) => {
      const n = b * batch + i;
      const purchase = i % 10 === 0;
      return {
        id: `${prefix}-${b}-${i}`,
        event_name: purchase ? 'Purchase' : 'PageView',
        event_time: new Date(now - (n % 86_400) * 1000).toISOString(),
        muid: `u${n % 5_000}`,
        data: purchase
          ? { value: (n % 100) + 0.25, currency: 'EUR' }
          : {
              path: `/p/${n % 50}`,
              referrer: `https://ref${n % 7}.example/x`,
              url: `https://shop.example/p/${n % 50}?utm_source=s${n % 5}&utm_medium=m`,
            },
      };
    });
  const stored = async () =>
    Number(
      (
        await ctx.raw`select count(*)::int as n from events
          where merchant_id = ${merchant.merchantId}::uuid and id like ${`${prefix}-%`}`
      )[0]?.n,
    );
  const pending = async () =>
    Number(
      (await ctx.raw`select count(*)::int as n from stat_pending where merchant_id = ${merchant.merchantId}::uuid`)[0]
        ?.n,
    );
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  const start = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let b = next++; b < batches; b = next++) {
        const res = await request(`${apiUrl}/v1/collect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ tagId: merchant.tagId, events: makeBatch(b) }),
        });
        if (res.status >= 300) throw new Error(`collect: ${res.status} ${res.body.slice(0, 200)}`);
      }
    }),
  );
  const deadline = Date.now() + 120_000;
  while ((await stored()) < total) {
    if (Date.now() > deadline) throw new Error('stats ingest: events not all stored within 120 s');
    await pause();
  }
  const storedSeconds = since(start) / 1000;
  // Folded by the API's own loop (about every second): nothing of the merchant's left pending.
  while ((await pending()) > 0) {
    if (Date.now() > deadline) throw new Error('stats ingest: events not all folded within 120 s');
    await pause();
  }
  const foldedSeconds = since(start) / 1000;
  // The aggregates of these events equal a count over them (the merchant holds only the bench's
  // collect and ingestion events; the range covers every one of them).
  const from = ymd(now - 3 * DAY_MS);
  const to = ymd(now + DAY_MS);
  const res = await request(
    `${ctx.api.url}/v1/partners/stats/summary?${new URLSearchParams({ merchantId: merchant.merchantId, startDate: from, endDate: to })}`,
    { headers: ctx.auth },
  );
  const totals = (JSON.parse(res.body) as { totals: Totals }).totals;
  const [row] = await ctx.raw`select count(*)::int as n from events
    where merchant_id = ${merchant.merchantId}::uuid and event_time >= ${from}::date and event_time < ${to}::date + 1`;
  const summaryMatches = res.status === 200 && totals.events === Number(row?.n);
  log(
    `  stats ingest: ${int(total)} events through /v1/collect stored in ${storedSeconds.toFixed(2)} s, folded in ${foldedSeconds.toFixed(2)} s; summary ${summaryMatches ? 'equals' : 'DIFFERS FROM'} the count`,
  );
  return {
    events: total,
    batch,
    concurrency,
    storedSeconds,
    foldedSeconds,
    storedPerSecond: total / storedSeconds,
    foldedPerSecond: total / foldedSeconds,
    summaryMatches,
  };
}

const SPEEDUP_TARGET = 20;
const GROWTH_TARGET = 1.2;
const P95_TARGET_MS = 50;

export const statsSection: Section<StatsResult> = {
  title: 'Statistics',
  async run(ctx) {
    // The seed's ranges span 90 days (every day row rewritten per fold): a long statement deadline on the shared machine.
    const handle = await openDatabase({
      kind: 'postgres',
      url: ctx.url,
      maxConnections: 2,
      statementTimeoutMs: 120_000,
    });
    const folded = new Map<string, number>();
    const check: Checker = { mismatches: [], compared: 0, visitorsMaxError: 0, visitorsWorst: '-' };
    try {
      const perSmall = Math.floor(ctx.settings.smallEvents / ctx.merchants.length);
      const perLarge = Math.floor(ctx.settings.largeEvents / ctx.merchants.length);
      let small: ScaleResult | null = null;
      if (ctx.perMerchant() < perSmall) {
        await ctx.seedTo(perSmall, 'seed (small)');
        small = await measureScale(ctx, handle.db, folded, check, 'small');
      } else {
        log('  stats: the events are already past the small scale (another section seeded): no growth figures');
      }
      await ctx.seedTo(perLarge, 'seed (large)');
      const large = await measureScale(ctx, handle.db, folded, check, 'large');
      const ingest = await measureIngest(ctx);
      if (check.mismatches.length > 0) {
        log(`  stats: *** ${check.mismatches.length} ANSWERS DIFFER FROM THE GROUP BY ***`);
        for (const line of check.mismatches.slice(0, 20)) log(`    ${line}`);
      }
      return {
        small,
        large,
        mismatches: check.mismatches,
        compared: check.compared,
        visitorsMaxError: check.visitorsMaxError,
        visitorsWorst: check.visitorsWorst,
        ingest,
      };
    } finally {
      await handle.close();
    }
  },
  targets(result) {
    const checks: TargetCheck[] = [
      {
        what: `stats: API answers equal the GROUP BY's (events, pageviews, purchases, top paths; ${int(result.compared)} answers)`,
        target: 'all equal',
        value: result.mismatches.length === 0 ? 'all equal' : `${result.mismatches.length} differ`,
        met: result.mismatches.length === 0,
      },
      {
        what: 'stats: visitors against count(distinct muid), largest error',
        target: '<= 2%',
        value: `${(result.visitorsMaxError * 100).toFixed(2)}%`,
        met: result.visitorsMaxError <= 0.02,
      },
    ];
    const { large, small } = result;
    for (const shape of large.shapes) {
      if (SHAPES.find((s) => s.key === shape.key)?.extra) continue;
      checks.push({
        what: `stats ${int(large.events)} events, ${shape.label}: GROUP BY p50 / API p50`,
        target: `>= ${SPEEDUP_TARGET}x`,
        value: ratio(shape.speedup),
        met: shape.speedup >= SPEEDUP_TARGET,
      });
      checks.push({
        what: `stats ${int(large.events)} events, ${shape.label}: API p95`,
        target: `< ${P95_TARGET_MS} ms`,
        value: ms(shape.api.p95),
        met: shape.api.p95 < P95_TARGET_MS,
      });
      const little = small?.shapes.find((s) => s.key === shape.key);
      const growth = little ? shape.api.p50 / little.api.p50 : Number.NaN;
      checks.push({
        what: `stats growth ${small ? int(small.events) : 'n/a'} -> ${int(large.events)}, ${shape.label} (API p50)`,
        target: `<= ${GROWTH_TARGET}x`,
        value: little ? ratio(growth) : 'n/a (run --section=stats alone)',
        met: little ? growth <= GROWTH_TARGET : null,
      });
    }
    checks.push({
      what: '(no target; ingestion with and without the fold: the ingestion section) `/v1/collect` until folded / until stored',
      target: '-',
      value: `${ratio(result.ingest.foldedSeconds / result.ingest.storedSeconds)}; fold ${large.foldMsPer1k.toFixed(1)} ms per 1k events`,
      met: null,
    });
    return checks;
  },
  report(result) {
    const { large, small, ingest } = result;
    const lines = [
      `## Statistics against GROUP BY over the events (${int(large.events)} events)`,
      '',
      '| scale | shape | API p50 | API p95 | API after a GROUP BY, p50 / p95 | GROUP BY p50 | GROUP BY p95 | GROUP BY / API (p50) | requests (API / after / GROUP BY) |',
      '|---|---|---|---|---|---|---|---|---|',
    ];
    for (const scale of [small, large]) {
      if (!scale) continue;
      for (const s of scale.shapes) {
        lines.push(
          `| ${int(scale.events)} | ${s.label} | ${ms(s.api.p50)} | ${ms(s.api.p95)} | ${ms(s.afterScan.p50)} / ${ms(s.afterScan.p95)} | ${ms(s.groupBy.p50)} | ${ms(s.groupBy.p95)} | ${ratio(s.speedup)} | ${s.api.n} / ${s.afterScan.n} / ${s.groupBy.n} |`,
        );
      }
    }
    lines.push(
      '',
      "API: `GET /v1/partners/stats/...` (UTC; each read folds pending ranges first), merchants in turn, timed alone. GROUP BY: the same answer from `events` (prepared; counts, `count(distinct muid)` per day, per period, per path and for the rest of the paths), for a tenth of the requests (at least 5), each followed by the API's answer to the same request (timed apart: after a GROUP BY, its scan has evicted the aggregates from shared buffers). Every GROUP BY answer is compared with that API answer: events, page views and purchases per point and period, the top 10 paths with their events and the `other` row's events, must be equal; visitors (a sketch) within 2%. The GROUP BY leaves out revenue (the seed's purchases carry no currency, the API answers `[]`).",
      '',
      `Answers compared: ${int(result.compared)}; differing: **${result.mismatches.length}**; visitors' largest error ${(result.visitorsMaxError * 100).toFixed(2)}% (${result.visitorsWorst}).`,
    );
    if (result.mismatches.length > 0) {
      lines.push(
        '',
        '**The API and the GROUP BY disagree:**',
        '',
        ...result.mismatches.slice(0, 20).map((m) => `- ${m}`),
      );
    }
    lines.push(
      '',
      "### Folding the seed, and the aggregates' size",
      '',
      '| scale | events folded | seconds | ms per 1k events | events MB | aggregates MB | aggregates MB per million events |',
      '|---|---|---|---|---|---|---|',
    );
    for (const scale of [small, large]) {
      if (!scale) continue;
      lines.push(
        `| ${int(scale.events)} | ${int(scale.foldedEvents)} | ${scale.foldSeconds.toFixed(1)} | ${scale.foldMsPer1k.toFixed(1)} | ${int(scale.sizesMb.events)} | ${scale.sizesMb.aggregates.toFixed(1)} | ${((scale.sizesMb.aggregates * 1e6) / scale.events).toFixed(1)} |`,
      );
    }
    lines.push(
      '',
      `The seed is COPYed past \`storeEvents\`: its \`seq\` ranges are queued in \`stat_pending\` (${RANGE_EVENTS} events per merchant per range) and folded by the server's \`foldPendingStats\` one range per merchant at a time, beside the API's own fold loop.`,
      '',
      '### Ingestion with the aggregates',
      '',
      '| events | batch x concurrent | until stored | until folded | stored events/s | folded events/s | summary = count |',
      '|---|---|---|---|---|---|---|',
      `| ${int(ingest.events)} | ${ingest.batch} x ${ingest.concurrency} | ${ingest.storedSeconds.toFixed(2)} s | ${ingest.foldedSeconds.toFixed(2)} s | ${int(ingest.storedPerSecond)} | ${int(ingest.foldedPerSecond)} | ${mark(ingest.summaryMatches)} |`,
      '',
      "`POST /v1/collect` (page views with path, referrer and utm values, 10% purchases in EUR) timed until every event is stored, then until none of the merchant's ranges is pending (folded by the loop of a process started with the fold on, about every second). Ingestion with the fold running against the write path alone is in the ingestion section.",
    );
    return lines;
  },
};
