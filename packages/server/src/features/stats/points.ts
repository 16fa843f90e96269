import type { StatsTotals } from '@partner/shared-schemas';
import type { Clickhouse } from '../../db/clickhouse/client.js';
import type { Interval } from './range.js';

/** How the instants of a read are cut into points. */
type PointCut =
  /** Local hours, days, weeks (from Monday) or months of `zone`; weeks and months not before `firstDate`. */
  | { interval: Interval; zone: string; firstDate: string }
  /** Two points: before `at` (key 0) and from it (key 1). */
  | { splitAt: number };

export interface PointsQuery {
  merchantId: string;
  /** The instants read, [start, end) in ms. */
  start: number;
  end: number;
  names: readonly string[];
  cut: PointCut;
}

/** Totals per point key: `YYYY-MM-DD` (days, weeks, months), Unix seconds (hours) or 0 and 1 (split). */
export type PointTotals = Map<string, StatsTotals>;

const HOUR = 3_600_000;
const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * The SQL of a point's key from the instant `x`. Grouping whole UTC hours lets ClickHouse answer
 * from the `hourly` projection; in a zone whose offset is not whole hours the events are read.
 */
function keyOf(cut: PointCut, x: string): string {
  if ('splitAt' in cut) return `toUInt8(${x} >= toDateTime64({split:Int64} / 1000, 3))`;
  const day = `toDate(${x}, {zone:String})`;
  switch (cut.interval) {
    case 'hour':
      return `toUnixTimestamp(toStartOfHour(${x}, {zone:String}))`;
    case 'day':
      return day;
    case 'week':
      return `greatest(toMonday(${day}), toDate({first:String}))`;
    case 'month':
      return `greatest(toStartOfMonth(${day}), toDate({first:String}))`;
  }
}

/** Whether every edge a read cuts at is a whole UTC hour (then the `hourly` projection serves it). */
function hourAligned(query: PointsQuery, edges: readonly number[]): boolean {
  return [query.start, query.end, ...edges].every((t) => t % HOUR === 0);
}

const empty = (): StatsTotals => ({ events: 0, visitors: 0, pageviews: 0, purchases: 0, revenue: [] });

/** `sum` of Decimal(76, 30) as text, written with the scale of the amounts summed (`12.50`, not `12.5`). */
export function amountWithScale(sum: string, scale: number): string {
  const [whole, fraction = ''] = sum.split('.');
  return scale === 0 ? (whole as string) : `${whole}.${fraction.padEnd(scale, '0').slice(0, scale)}`;
}

/**
 * Events, visitors, page views, purchases and revenue per point, in two statements: counts and
 * sums by name and currency, and distinct visitors (ClickHouse's `uniq`: exact up to 65,536 per
 * point, within about 1% beyond).
 */
export async function readPoints(
  clickhouse: Clickhouse,
  query: PointsQuery,
  edges: readonly number[] = [],
): Promise<PointTotals> {
  const aligned = hourAligned(query, edges);
  const x = aligned ? 'toStartOfHour(event_time)' : 'event_time';
  const key = keyOf(query.cut, x);
  const where = [
    'merchant_id = {merchant:UUID}',
    aligned
      ? `${x} >= toDateTime({start:Int64}) AND ${x} < toDateTime({end:Int64})`
      : `${x} >= toDateTime64({startMs:Int64} / 1000, 3) AND ${x} < toDateTime64({endMs:Int64} / 1000, 3)`,
    ...(query.names.length > 0 ? ['event_name IN {names:Array(String)}'] : []),
  ].join(' AND ');
  const cut = query.cut;
  const params = {
    merchant: query.merchantId,
    start: seconds(query.start),
    end: seconds(query.end),
    startMs: query.start,
    endMs: query.end,
    names: query.names,
    ...('splitAt' in cut ? { split: cut.splitAt } : { zone: cut.zone, first: cut.firstDate }),
  };
  const [counts, visitors] = await Promise.all([
    clickhouse.query<{
      p: string | number;
      event_name: string;
      currency: string;
      events: string;
      revenue: string;
      scale: number;
    }>(
      `SELECT ${key} AS p, event_name, currency, count() AS events, toString(sum(revenue)) AS revenue, max(revenue_scale) AS scale
       FROM events WHERE ${where} GROUP BY p, event_name, currency`,
      params,
    ),
    clickhouse.query<{ p: string | number; visitors: string }>(
      `SELECT ${key} AS p, uniq(visitor) AS visitors FROM events WHERE ${where} GROUP BY p`,
      params,
    ),
  ]);
  const points: PointTotals = new Map();
  const point = (p: string | number) => {
    const k = String(p);
    const known = points.get(k);
    if (known) return known;
    const totals = empty();
    points.set(k, totals);
    return totals;
  };
  for (const row of counts) {
    const totals = point(row.p);
    const n = Number(row.events);
    totals.events += n;
    if (row.event_name === 'PageView') totals.pageviews += n;
    if (row.event_name === 'Purchase') {
      totals.purchases += n;
      if (row.currency !== '')
        totals.revenue.push({ currency: row.currency, amount: amountWithScale(row.revenue, row.scale) });
    }
  }
  for (const row of visitors) point(row.p).visitors = Number(row.visitors);
  for (const totals of points.values()) totals.revenue.sort((a, b) => (a.currency < b.currency ? -1 : 1));
  return points;
}
