/**
 * The stats section's shapes: each one's API request, its answer read into one form, the same
 * answer computed exactly over the raw `events` table in ClickHouse (`GROUP BY`, no projection),
 * and the comparison of the two.
 */
import type { Clickhouse } from './clickhouse.js';
import { windowEnd } from './seed.js';

export type ShapeKey = 'timeseries90dNewYork' | 'summary30d' | 'paths30d' | 'timeseries90d' | 'paths30dKolkata';
type Kind = 'series' | 'summary' | 'top';

export interface Shape {
  key: ShapeKey;
  label: string;
  kind: Kind;
  zone: string;
  /** A shape the p95 targets name (the others are measured and compared, no target). */
  target: boolean;
}

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

export function apiPath(shape: Shape, merchantId: string, d: Dates): string {
  const q = new URLSearchParams({ merchantId, timezone: shape.zone });
  if (shape.kind === 'series') {
    q.set('startDate', d.start90);
    q.set('endDate', d.last);
    q.set('interval', 'day');
    return `/v1/partners/stats/timeseries?${q}`;
  }
  q.set('startDate', d.start30);
  q.set('endDate', d.last);
  if (shape.kind === 'summary') {
    q.set('compare', 'previous');
    return `/v1/partners/stats/summary?${q}`;
  }
  q.set('dimension', 'path');
  q.set('limit', '10');
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

export type Answer =
  | { kind: 'series'; points: Map<string, Totals>; count: number }
  | { kind: 'summary'; current: Totals; previous: Totals | null }
  | { kind: 'top'; rows: Counted[]; other: Omit<Counted, 'value'> | null };

const NONE: Totals = { events: 0, visitors: 0, pageviews: 0, purchases: 0, eur: '' };

/** An exact decimal amount as tenths (`1234.5` -> `12345`); the seed's values have one decimal. */
function tenths(amount: string): string {
  const [whole = '0', fraction = ''] = amount.split('.');
  if (/[1-9]/.test(fraction.slice(1))) return `not tenths: ${amount}`;
  return String(BigInt(whole) * 10n + BigInt(fraction[0] ?? '0'));
}

type ApiTotals = Omit<Totals, 'eur'> & { revenue: Array<{ currency: string; amount: string }> };

const totalsOf = (t: ApiTotals): Totals => {
  const eur = t.revenue.find((r) => r.currency === 'EUR');
  return {
    events: t.events,
    visitors: t.visitors,
    pageviews: t.pageviews,
    purchases: t.purchases,
    eur: eur ? tenths(eur.amount) : '',
  };
};

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
  const pages = `${where('start30')} AND event_name = 'PageView'`;
  const top = await clickhouse.query<{ value: string; events: string; visitors: string }>(
    `SELECT path AS value, count() AS events, uniqExact(visitor) AS visitors FROM events WHERE ${pages}
     GROUP BY value ORDER BY events DESC, value LIMIT 10`,
    params,
    RAW,
  );
  const rows = top.map((r) => ({ value: r.value, events: Number(r.events), visitors: Number(r.visitors) }));
  if (rows.length < 10) return { kind: 'top', rows, other: null };
  const [rest] = await clickhouse.query<{ events: string; visitors: string }>(
    `SELECT count() AS events, uniqExact(visitor) AS visitors FROM events WHERE ${pages} AND path NOT IN {top:Array(String)}`,
    { ...params, top: rows.map((r) => r.value) },
    RAW,
  );
  const events = Number(rest?.events ?? 0);
  return { kind: 'top', rows, other: events > 0 ? { events, visitors: Number(rest?.visitors ?? 0) } : null };
}

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
    } else {
      this.mismatches.push(`${where}: a ${api.kind} answer against a ${exact.kind}`);
    }
  }
}
