import type { StatsTotals } from '@partner/shared-schemas';
import type { Clickhouse } from '../../db/clickhouse/client.js';
import type { Interval } from './range.js';
import { type Scope, timeExpression, timeFormOf, whereOf } from './where.js';

/** How the instants of a read are cut into points. */
type PointCut =
  /** Local hours, days, weeks (from Monday) or months of `zone`; weeks and months not before `firstDate`. */
  | { interval: Interval; zone: string; firstDate: string }
  /** Two points: before `at` (key 0) and from it (key 1). */
  | { splitAt: number };

export interface PointsQuery extends Scope {
  cut: PointCut;
}

/** A point's counts, visitors and visits (summed first, made rates once all are in: `pointTotals`). */
export interface PointSums {
  events: number;
  visitors: number;
  pageviews: number;
  purchases: number;
  revenue: StatsTotals['revenue'];
  visits: number;
  bounces: number;
  durationMs: number;
  visitPageviews: number;
}

/** Sums per point key: `YYYY-MM-DD` (days, weeks, months), Unix seconds (hours) or 0 and 1 (split). */
export type PointTotals = Map<string, PointSums>;

const DAY = 86_400_000;

/** The SQL of a point's key from the instant `x`. */
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

export const noPoint = (): PointSums => ({
  events: 0,
  visitors: 0,
  pageviews: 0,
  purchases: 0,
  revenue: [],
  visits: 0,
  bounces: 0,
  durationMs: 0,
  visitPageviews: 0,
});

/** A point's totals as the API answers them: the visit metrics as rates and means. */
export function pointTotals(sums: PointSums): Omit<StatsTotals, 'botEvents' | 'goals'> {
  const { visits, bounces, durationMs, visitPageviews, ...counts } = sums;
  return {
    ...counts,
    visits,
    bounceRate: visits === 0 ? 0 : bounces / visits,
    visitDuration: visits === 0 ? 0 : durationMs / 1000 / visits,
    viewsPerVisit: visits === 0 ? 0 : visitPageviews / visits,
  };
}

/** `sum` of Decimal(76, 30) as text, written with the scale of the amounts summed (`12.50`, not `12.5`). */
export function amountWithScale(sum: string, scale: number): string {
  const [whole, fraction = ''] = sum.split('.');
  return scale === 0 ? (whole as string) : `${whole}.${fraction.padEnd(scale, '0').slice(0, scale)}`;
}

/**
 * Per point: events, page views, purchases and revenue (by name and currency), distinct visitors
 * (ClickHouse's `uniq`: exact up to 65,536 a point, within about 1% beyond), and the visits begun
 * in it, with their bounces, durations and page views; three statements. Whole UTC hours are
 * grouped from `toStartOfHour(event_time)`, so the `hourly` projection answers an unfiltered read
 * in any zone whose offset is whole hours; the visits from `visits_daily` (a visit's rows of its
 * days merged). A visit counts where it begins, with its events up to a day past the range.
 */
export async function readPoints(
  clickhouse: Clickhouse,
  query: PointsQuery,
  edges: readonly number[] = [],
): Promise<PointTotals> {
  const form = timeFormOf([query.start, query.end, ...edges]) === 'instant' ? 'instant' : 'hour';
  const key = keyOf(query.cut, timeExpression(form));
  const { where, params } = whereOf(query, form);
  const cut = query.cut;
  Object.assign(params, 'splitAt' in cut ? { split: cut.splitAt } : { zone: cut.zone, first: cut.firstDate });
  const filtered = query.names.length > 0 || query.filters.length > 0;
  // The visits' days: whole UTC days from the range's start to a day past its end.
  params.visitFrom = Math.floor(query.start / DAY) * 86_400;
  params.visitTo = Math.floor((query.end + DAY) / DAY) * 86_400;
  const [counts, visitors, visits] = await Promise.all([
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
    clickhouse.query<{ p: string | number; visits: string; bounces: string; duration: string; views: string }>(
      `SELECT ${keyOf(cut, 'vs')} AS p, count() AS visits, countIf(pv = 1 AND ia = 0) AS bounces,
         sum(dur) AS duration, sum(pv) AS views
       FROM (
         SELECT visit, min(visit_start) AS vs, dateDiff('millisecond', min(event_time), max(event_time)) AS dur,
           countIf(event_name = 'PageView') AS pv, countIf(event_name NOT IN ('PageView', 'Engagement')) AS ia
         FROM events
         WHERE merchant_id = {merchant:UUID} AND toDate(event_time) >= toDate(toDateTime({visitFrom:Int64}, 'UTC'))
           AND toDate(event_time) < toDate(toDateTime({visitTo:Int64}, 'UTC'))
           ${filtered ? `AND visit IN (SELECT visit FROM events WHERE ${where})` : ''}
         GROUP BY visit
         HAVING vs >= toDateTime64({startMs:Int64} / 1000, 3) AND vs < toDateTime64({endMs:Int64} / 1000, 3)
       )
       GROUP BY p`,
      params,
    ),
  ]);
  const points: PointTotals = new Map();
  const point = (p: string | number) => {
    const k = String(p);
    const known = points.get(k);
    if (known) return known;
    const sums = noPoint();
    points.set(k, sums);
    return sums;
  };
  for (const row of counts) {
    const sums = point(row.p);
    const n = Number(row.events);
    sums.events += n;
    if (row.event_name === 'PageView') sums.pageviews += n;
    if (row.event_name === 'Purchase') {
      sums.purchases += n;
      if (row.currency !== '')
        sums.revenue.push({ currency: row.currency, amount: amountWithScale(row.revenue, row.scale) });
    }
  }
  for (const row of visitors) point(row.p).visitors = Number(row.visitors);
  for (const row of visits) {
    const sums = point(row.p);
    sums.visits = Number(row.visits);
    sums.bounces = Number(row.bounces);
    sums.durationMs = Number(row.duration);
    sums.visitPageviews = Number(row.views);
  }
  for (const sums of points.values()) sums.revenue.sort((a, b) => (a.currency < b.currency ? -1 : 1));
  return points;
}
