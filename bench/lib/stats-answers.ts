/**
 * The stats section's shapes: each one's API request, its answer read into one form, the same
 * answer computed exactly over the raw `events` table in ClickHouse (`GROUP BY`, no projection),
 * and the comparison of the two.
 */
import { pathPatternRegex } from '@partner/shared-schemas';
import type { Clickhouse } from './clickhouse.js';
import { windowEnd } from './seed.js';

export type ShapeKey =
  | 'timeseries90dNewYork'
  | 'summary30d'
  | 'paths30d'
  | 'timeseries90d'
  | 'paths30dKolkata'
  | 'visits30d'
  | 'channels30dCountry'
  | 'funnel30d'
  | 'attribution30d';
type Kind = 'series' | 'summary' | 'top' | 'visits' | 'funnel' | 'attribution';

export interface Shape {
  key: ShapeKey;
  label: string;
  kind: Kind;
  zone: string;
  /** A shape issue 55's p95 targets name (50 ms, 100 ms from 100M events). */
  target: boolean;
  /** A p95 target of its own (issues 52 and 53), at every scale. */
  p95Ms?: number;
  /** Measured once the merchants have GOALS (created after the shapes without). */
  goals?: boolean;
  /** A `top` shape's dimension (default `path`) and filter (the `filters` parameter, one `column==value`). */
  dimension?: 'path' | 'channel';
  filter?: { column: 'country'; value: string };
}

/**
 * The goals the bench gives every merchant (issue 53's funnel): a path goal and three event goals
 * that the seed's events meet (lib/seed.ts: paths `/p/0` ... `/p/976`, 12 event names).
 */
export const GOALS = [
  { name: 'Product page', pathPattern: '/p/1*' },
  { name: 'Added to cart', eventName: 'AddToCart' },
  { name: 'Checkout', eventName: 'BeginCheckout' },
  { name: 'Purchase', eventName: 'Purchase' },
] as const;
/** The funnel's window (ISO 8601) and in ms. */
const FUNNEL_WINDOW = 'P1D';
const FUNNEL_WINDOW_MS = 86_400_000;

export const SHAPES: readonly Shape[] = [
  {
    key: 'timeseries90dNewYork',
    label: '90-day daily series, America/New_York',
    kind: 'series',
    zone: 'America/New_York',
    target: true,
  },
  { key: 'summary30d', label: '30-day summary, compare=previous', kind: 'summary', zone: 'UTC', target: true },
  { key: 'paths30d', label: 'top-10 paths with other, 30 days', kind: 'top', zone: 'UTC', target: true },
  { key: 'timeseries90d', label: '90-day daily series, UTC (extra)', kind: 'series', zone: 'UTC', target: false },
  // Its range's edges are half-hours: read from the events, not from the daily projection.
  {
    key: 'paths30dKolkata',
    label: 'top-10 paths, 30 days, Asia/Kolkata (extra)',
    kind: 'top',
    zone: 'Asia/Kolkata',
    target: false,
  },
  // Issue 52: visit metrics and a filtered channel breakdown; issue 53: funnel and attribution.
  {
    key: 'visits30d',
    label: '30-day summary, visit metrics',
    kind: 'visits',
    zone: 'UTC',
    target: false,
    p95Ms: 150,
    goals: true,
  },
  {
    key: 'channels30dCountry',
    label: 'channels, 30 days, country==DE',
    kind: 'top',
    zone: 'UTC',
    target: false,
    p95Ms: 150,
    goals: true,
    dimension: 'channel',
    filter: { column: 'country', value: 'DE' },
  },
  {
    key: 'funnel30d',
    label: '4-step funnel, 30 days, window P1D',
    kind: 'funnel',
    zone: 'UTC',
    target: false,
    p95Ms: 250,
    goals: true,
  },
  {
    key: 'attribution30d',
    label: 'first-touch attribution by channel, 30 days',
    kind: 'attribution',
    zone: 'UTC',
    target: false,
    p95Ms: 250,
    goals: true,
  },
];

export const TARGET_SHAPES = SHAPES.filter((shape) => shape.target);

const DAY_MS = 86_400_000;
const ymd = (instant: number) => new Date(instant).toISOString().slice(0, 10);

/** Local dates (in every shape's zone alike): the 90 and 30 days that end yesterday (UTC), the 30 before those. */
export interface Dates {
  start90: string;
  start60: string;
  start30: string;
  last: string;
}

export function datesNow(): Dates {
  const end = windowEnd();
  return {
    start90: ymd(end - 90 * DAY_MS),
    start60: ymd(end - 60 * DAY_MS),
    start30: ymd(end - 30 * DAY_MS),
    last: ymd(end - DAY_MS),
  };
}

/** The shape's request; `goals`: the merchant's GOALS' ids, in order (the funnel's steps). */
export function apiPath(shape: Shape, merchantId: string, d: Dates, goals: readonly string[] = []): string {
  const q = new URLSearchParams({ merchantId, timezone: shape.zone });
  if (shape.kind === 'series') {
    q.set('startDate', d.start90);
    q.set('endDate', d.last);
    q.set('interval', 'day');
    return `/v1/partners/stats/timeseries?${q}`;
  }
  q.set('startDate', d.start30);
  q.set('endDate', d.last);
  if (shape.kind === 'summary' || shape.kind === 'visits') {
    if (shape.kind === 'summary') q.set('compare', 'previous');
    return `/v1/partners/stats/summary?${q}`;
  }
  if (shape.kind === 'funnel') {
    q.set('steps', goals.join(','));
    q.set('window', FUNNEL_WINDOW);
    return `/v1/partners/stats/funnel?${q}`;
  }
  if (shape.kind === 'attribution') {
    q.set('model', 'first_touch');
    q.set('dimension', 'channel');
    q.set('limit', '10');
    return `/v1/partners/stats/attribution?${q}`;
  }
  q.set('dimension', shape.dimension ?? 'path');
  q.set('limit', '10');
  if (shape.filter) q.set('filters', `${shape.filter.column}==${shape.filter.value}`);
  return `/v1/partners/stats/breakdown?${q}`;
}

/** Counts of a point or period; `eur` the EUR revenue in tenths ('' when no purchase has one). */
export interface Totals {
  events: number;
  visitors: number;
  pageviews: number;
  purchases: number;
  eur: string;
}

interface Counted {
  value: string;
  events: number;
  visitors: number;
}

/** A period's visit metrics (visits begun in it). */
interface VisitMetrics {
  visits: number;
  bounceRate: number;
  visitDuration: number;
  viewsPerVisit: number;
}

interface Credited {
  value: string;
  visitors: number;
  purchases: number;
  eur: string;
}

export type Answer =
  | { kind: 'series'; points: Map<string, Totals>; count: number }
  | { kind: 'summary'; current: Totals; previous: Totals | null }
  | { kind: 'top'; rows: Counted[]; other: Omit<Counted, 'value'> | null }
  | { kind: 'visits'; totals: Totals; metrics: VisitMetrics }
  | { kind: 'funnel'; steps: number[] }
  | { kind: 'attribution'; rows: Credited[] };

const NONE: Totals = { events: 0, visitors: 0, pageviews: 0, purchases: 0, eur: '' };

/** An exact decimal amount as tenths (`1234.5` -> `12345`); the seed's values have one decimal. */
function tenths(amount: string): string {
  const [whole = '0', fraction = ''] = amount.split('.');
  if (/[1-9]/.test(fraction.slice(1))) return `not tenths: ${amount}`;
  return String(BigInt(whole) * 10n + BigInt(fraction[0] ?? '0'));
}

type Revenue = Array<{ currency: string; amount: string }>;
type ApiTotals = Omit<Totals, 'eur'> & { revenue: Revenue };

const eurOf = (revenue: Revenue) => {
  const eur = revenue.find((r) => r.currency === 'EUR');
  return eur ? tenths(eur.amount) : '';
};

const totalsOf = (t: ApiTotals): Totals => ({
  events: t.events,
  visitors: t.visitors,
  pageviews: t.pageviews,
  purchases: t.purchases,
  eur: eurOf(t.revenue),
});

/** The API's body (ours or the baseline's: the same response shapes) as an Answer. */
export function answerOf(shape: Shape, body: string): Answer {
  if (shape.kind === 'series') {
    const { points } = JSON.parse(body) as { points: Array<ApiTotals & { start: string }> };
    // `start` is the local midnight with its offset: its first 10 characters are the local date.
    return {
      kind: 'series',
      points: new Map(points.map((p) => [p.start.slice(0, 10), totalsOf(p)])),
      count: points.length,
    };
  }
  if (shape.kind === 'visits') {
    const { totals } = JSON.parse(body) as { totals: ApiTotals & VisitMetrics };
    const { visits, bounceRate, visitDuration, viewsPerVisit } = totals;
    return { kind: 'visits', totals: totalsOf(totals), metrics: { visits, bounceRate, visitDuration, viewsPerVisit } };
  }
  if (shape.kind === 'funnel') {
    const { steps } = JSON.parse(body) as { steps: Array<{ visitors: number }> };
    return { kind: 'funnel', steps: steps.map((step) => step.visitors) };
  }
  if (shape.kind === 'attribution') {
    const { rows } = JSON.parse(body) as {
      rows: Array<{ value: string; visitors: number; purchases: number; revenue: Revenue }>;
    };
    return {
      kind: 'attribution',
      rows: rows.map((r) => ({ value: r.value, visitors: r.visitors, purchases: r.purchases, eur: eurOf(r.revenue) })),
    };
  }
  if (shape.kind === 'summary') {
    const answer = JSON.parse(body) as { totals: ApiTotals; previous: { totals: ApiTotals } | null };
    return {
      kind: 'summary',
      current: totalsOf(answer.totals),
      previous: answer.previous ? totalsOf(answer.previous.totals) : null,
    };
  }
  const answer = JSON.parse(body) as { rows: Counted[]; other: Counted | null };
  return {
    kind: 'top',
    rows: answer.rows.map((r) => ({ value: r.value, events: r.events, visitors: r.visitors })),
    other: answer.other ? { events: answer.other.events, visitors: answer.other.visitors } : null,
  };
}

/** Exact aggregates of a point or period (`uniqExact`, not the API's `uniq`). */
const AGGREGATES = `count() AS events, uniqExact(visitor) AS visitors,
  countIf(event_name = 'PageView') AS pageviews, countIf(event_name = 'Purchase') AS purchases,
  countIf(event_name = 'Purchase' AND currency = 'EUR') AS eur_purchases,
  sumIf(toUInt64(revenue * 10), event_name = 'Purchase' AND currency = 'EUR') AS eur_tenths`;

type TotalsRow = Record<'events' | 'visitors' | 'pageviews' | 'purchases' | 'eur_purchases' | 'eur_tenths', string>;

const totalsOfRow = (row: TotalsRow | undefined): Totals =>
  row
    ? {
        events: Number(row.events),
        visitors: Number(row.visitors),
        pageviews: Number(row.pageviews),
        purchases: Number(row.purchases),
        eur: Number(row.eur_purchases) > 0 ? String(row.eur_tenths) : '',
      }
    : NONE;

/** The raw table only: no projection answers a truth. */
const RAW = { timeoutMs: 600_000, settings: { optimize_use_projections: 0 } } as const;

/**
 * The shape's answer by `GROUP BY` over the raw `events` of one merchant: local dates in the
 * shape's zone (ClickHouse's own time zone rules), exact distinct visitors, the top 10 paths by
 * events (ties by value) and the rest's events and visitors.
 */
export async function truthOf(clickhouse: Clickhouse, shape: Shape, merchantId: string, d: Dates): Promise<Answer> {
  const local = 'toDate(event_time, {zone:String})';
  const params = { merchant: merchantId, zone: shape.zone, ...d };
  const where = (first: string) =>
    `merchant_id = {merchant:UUID} AND ${local} BETWEEN toDate({${first}:String}) AND toDate({last:String})`;
  if (shape.kind === 'series') {
    const rows = await clickhouse.query<TotalsRow & { day: string }>(
      `SELECT toString(${local}) AS day, ${AGGREGATES} FROM events WHERE ${where('start90')} GROUP BY day ORDER BY day`,
      params,
      RAW,
    );
    return { kind: 'series', points: new Map(rows.map((row) => [row.day, totalsOfRow(row)])), count: 90 };
  }
  if (shape.kind === 'summary') {
    const rows = await clickhouse.query<TotalsRow & { current: number | boolean }>(
      `SELECT ${local} >= toDate({start30:String}) AS current, ${AGGREGATES} FROM events WHERE ${where('start60')} GROUP BY current`,
      params,
      RAW,
    );
    return {
      kind: 'summary',
      current: totalsOfRow(rows.find((row) => Number(row.current) === 1)),
      previous: totalsOfRow(rows.find((row) => Number(row.current) === 0)),
    };
  }
  if (shape.kind === 'visits') return visitsTruth(clickhouse, where('start30'), params);
  if (shape.kind === 'funnel') return funnelTruth(clickhouse, where('start30'), params);
  if (shape.kind === 'attribution') return attributionTruth(clickhouse, where('start30'), params);
  const column = shape.dimension ?? 'path';
  const filter = shape.filter ? ` AND ${shape.filter.column} = {filter:String}` : '';
  const pages = `${where('start30')} AND event_name = 'PageView'${filter}`;
  const top = await clickhouse.query<{ value: string; events: string; visitors: string }>(
    `SELECT ${column} AS value, count() AS events, uniqExact(visitor) AS visitors FROM events WHERE ${pages}
     GROUP BY value ORDER BY events DESC, value LIMIT 10`,
    { ...params, filter: shape.filter?.value ?? '' },
    RAW,
  );
  const rows = top.map((r) => ({ value: r.value, events: Number(r.events), visitors: Number(r.visitors) }));
  if (rows.length < 10) return { kind: 'top', rows, other: null };
  const [rest] = await clickhouse.query<{ events: string; visitors: string }>(
    `SELECT count() AS events, uniqExact(visitor) AS visitors FROM events WHERE ${pages} AND ${column} NOT IN {top:Array(String)}`,
    { ...params, filter: shape.filter?.value ?? '', top: rows.map((r) => r.value) },
    RAW,
  );
  const events = Number(rest?.events ?? 0);
  return { kind: 'top', rows, other: events > 0 ? { events, visitors: Number(rest?.visitors ?? 0) } : null };
}

type Params = Record<string, unknown>;

/**
 * The range's totals, and its visits: each visit (its events from the day before the range to the
 * day after: the seed's visits last minutes) counted when its first `visit_start` falls in the range; a bounce has one page view and no other event
 * but `Engagement`; its duration from its first event to its last.
 */
async function visitsTruth(clickhouse: Clickhouse, where: string, params: Params): Promise<Answer> {
  const [totals] = await clickhouse.query<TotalsRow>(`SELECT ${AGGREGATES} FROM events WHERE ${where}`, params, RAW);
  const [v] = await clickhouse.query<{ visits: string; bounces: string; duration: string; views: string }>(
    `SELECT count() AS visits, countIf(pv = 1 AND ia = 0) AS bounces, sum(dur) AS duration, sum(pv) AS views FROM (
       SELECT min(visit_start) AS vs, dateDiff('millisecond', min(event_time), max(event_time)) AS dur,
         countIf(event_name = 'PageView') AS pv, countIf(event_name NOT IN ('PageView', 'Engagement')) AS ia
       FROM events WHERE merchant_id = {merchant:UUID}
         AND toDate(event_time) BETWEEN toDate({start30:String}) - 1 AND toDate({last:String}) + 1
       GROUP BY visit
       HAVING toDate(vs, {zone:String}) BETWEEN toDate({start30:String}) AND toDate({last:String}))`,
    params,
    RAW,
  );
  const visits = Number(v?.visits ?? 0);
  const per = (value: string | undefined) => (visits === 0 ? 0 : Number(value ?? 0) / visits);
  return {
    kind: 'visits',
    totals: totalsOfRow(totals),
    metrics: {
      visits,
      bounceRate: per(v?.bounces),
      visitDuration: per(v?.duration) / 1000,
      viewsPerVisit: per(v?.views),
    },
  };
}

/** A goal's condition on a raw event (`match` of its path pattern's regular expression). */
function goalSql(goal: (typeof GOALS)[number], name: string, params: Params): string {
  if ('eventName' in goal) {
    params[name] = goal.eventName;
    return `event_name = {${name}:String}`;
  }
  params[name] = pathPatternRegex(goal.pathPattern);
  return `(event_name = 'PageView' AND match(path, {${name}:String}))`;
}

/**
 * Visitors who reached each of GOALS in order within the window of their first step: ClickHouse's
 * `windowFunnel` over the raw events of the range, as the server counts (a visitor at level k
 * counts for steps 1..k), not a method of its own.
 */
async function funnelTruth(clickhouse: Clickhouse, where: string, params: Params): Promise<Answer> {
  const p: Params = { ...params, window: FUNNEL_WINDOW_MS };
  const conditions = GOALS.map((goal, i) => goalSql(goal, `g${i}`, p));
  const rows = await clickhouse.query<{ level: string; visitors: string }>(
    `SELECT level, count() AS visitors FROM (
       SELECT windowFunnel({window:UInt64})(toUInt64(toUnixTimestamp64Milli(event_time)), ${conditions.join(', ')}) AS level
       FROM events WHERE ${where} GROUP BY visitor
     ) WHERE level > 0 GROUP BY level`,
    p,
    RAW,
  );
  const steps = GOALS.map(() => 0);
  for (const row of rows) for (let i = 0; i < Number(row.level); i++) steps[i] = (steps[i] ?? 0) + Number(row.visitors);
  return { kind: 'funnel', steps };
}

/**
 * Each visitor's purchases and EUR revenue in the range credited to the channel of their first
 * visit in it (the smallest `(visit_start, event_time)`); per channel the visitors, purchases and
 * revenue, the 10 with most purchases (then visitors, then value).
 */
async function attributionTruth(clickhouse: Clickhouse, where: string, params: Params): Promise<Answer> {
  const rows = await clickhouse.query<{
    value: string;
    visitors: string;
    purchases: string;
    eur: string;
    paid: string;
  }>(
    `SELECT touch AS value, count() AS visitors, sum(purchases) AS purchases, sum(eur) AS eur, sum(paid) AS paid FROM (
       SELECT tupleElement(min((visit_start, event_time, channel)), 3) AS touch,
         countIf(event_name = 'Purchase') AS purchases,
         countIf(event_name = 'Purchase' AND currency = 'EUR') AS paid,
         sumIf(toUInt64(revenue * 10), event_name = 'Purchase' AND currency = 'EUR') AS eur
       FROM events WHERE ${where} GROUP BY visitor)
     GROUP BY value ORDER BY purchases DESC, visitors DESC, value LIMIT 10`,
    params,
    RAW,
  );
  return {
    kind: 'attribution',
    rows: rows.map((r) => ({
      value: r.value,
      visitors: Number(r.visitors),
      purchases: Number(r.purchases),
      eur: Number(r.paid) > 0 ? String(r.eur) : '',
    })),
  };
}

/** Equal within a relative 1e-9 (the API's rates are quotients of the same exact sums). */
const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** Disagreements and the visitors' largest relative error over every answer compared. */
export class Checker {
  mismatches: string[] = [];
  compared = 0;
  visitorsMaxError = 0;
  visitorsWorst = '-';

  private visitors(where: string, api: number, exact: number): void {
    if (exact === 0) {
      if (api !== 0) this.mismatches.push(`${where}: visitors ${api}, exact 0`);
      return;
    }
    const error = Math.abs(api / exact - 1);
    if (error <= this.visitorsMaxError && this.visitorsWorst !== '-') return;
    this.visitorsMaxError = error;
    this.visitorsWorst = `${where}: ${api} against ${exact}`;
  }

  private totals(where: string, api: Totals, exact: Totals): void {
    for (const field of ['events', 'pageviews', 'purchases', 'eur'] as const) {
      if (api[field] !== exact[field]) this.mismatches.push(`${where}: ${field} ${api[field]}, exact ${exact[field]}`);
    }
    this.visitors(where, api.visitors, exact.visitors);
  }

  /** Events, page views, purchases, EUR revenue, top values and other's events equal; visitors' error kept. */
  compare(where: string, api: Answer, exact: Answer): void {
    this.compared++;
    if (api.kind === 'series' && exact.kind === 'series') {
      if (api.count !== exact.count) this.mismatches.push(`${where}: ${api.count} points, not ${exact.count}`);
      for (const [day, point] of api.points) this.totals(`${where} ${day}`, point, exact.points.get(day) ?? NONE);
      const missing = [...exact.points.keys()].filter((day) => !api.points.has(day));
      if (missing.length > 0) this.mismatches.push(`${where}: days without a point: ${missing.join(', ')}`);
    } else if (api.kind === 'summary' && exact.kind === 'summary') {
      this.totals(`${where} current`, api.current, exact.current);
      if (!api.previous) this.mismatches.push(`${where}: no previous period`);
      else this.totals(`${where} previous`, api.previous, exact.previous ?? NONE);
    } else if (api.kind === 'top' && exact.kind === 'top') {
      const list = (rows: Counted[]) => rows.map((r) => `${r.value}=${r.events}`).join(' ');
      if (list(api.rows) !== list(exact.rows)) {
        this.mismatches.push(`${where}: top [${list(api.rows)}], exact [${list(exact.rows)}]`);
      }
      for (const [i, row] of exact.rows.entries())
        this.visitors(`${where} ${row.value}`, api.rows[i]?.visitors ?? 0, row.visitors);
      if ((api.other?.events ?? 0) !== (exact.other?.events ?? 0)) {
        this.mismatches.push(`${where}: other's events ${api.other?.events ?? 0}, exact ${exact.other?.events ?? 0}`);
      }
      if (exact.other) this.visitors(`${where} other`, api.other?.visitors ?? 0, exact.other.visitors);
    } else if (api.kind === 'visits' && exact.kind === 'visits') {
      this.totals(where, api.totals, exact.totals);
      for (const field of ['visits', 'bounceRate', 'visitDuration', 'viewsPerVisit'] as const) {
        if (!near(api.metrics[field], exact.metrics[field])) {
          this.mismatches.push(`${where}: ${field} ${api.metrics[field]}, exact ${exact.metrics[field]}`);
        }
      }
    } else if (api.kind === 'funnel' && exact.kind === 'funnel') {
      if (api.steps.join(' ') !== exact.steps.join(' ')) {
        this.mismatches.push(`${where}: steps [${api.steps.join(' ')}], exact [${exact.steps.join(' ')}]`);
      }
    } else if (api.kind === 'attribution' && exact.kind === 'attribution') {
      const list = (rows: Credited[]) => rows.map((r) => `${r.value}=${r.visitors}/${r.purchases}/${r.eur}`).join(' ');
      if (list(api.rows) !== list(exact.rows)) {
        this.mismatches.push(`${where}: [${list(api.rows)}], exact [${list(exact.rows)}]`);
      }
    } else {
      this.mismatches.push(`${where}: a ${api.kind} answer against a ${exact.kind}`);
    }
  }
}
