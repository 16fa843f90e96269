import type { StatsFilter, StatsRealtimeResponse } from '@partner/shared-schemas';
import type { Clickhouse } from '../../db/clickhouse/client.js';
import { whereOf } from './where.js';

/** "Now": the last 5 minutes; a minute ahead too, for clients whose clocks run fast. */
const WINDOW_MS = 5 * 60_000;
const AHEAD_MS = 60_000;
const TOP_PAGES = 10;

/** Who is on a merchant's site now, and on which pages (each visitor on their latest page view's). */
export async function readVisitorsNow(
  clickhouse: Clickhouse,
  merchantId: string,
  now: number,
  filters: readonly StatsFilter[] = [],
): Promise<StatsRealtimeResponse> {
  const scope = { merchantId, start: now - WINDOW_MS, end: now + AHEAD_MS, names: [], filters };
  const { where: window, params } = whereOf(scope, 'instant');
  params.top = TOP_PAGES;
  const [[totals], pages] = await Promise.all([
    clickhouse.query<{ visitors: string; pageviews: string }>(
      `SELECT uniqExact(visitor) AS visitors, countIf(event_name = 'PageView') AS pageviews FROM events WHERE ${window}`,
      params,
    ),
    clickhouse.query<{ value: string; visitors: string }>(
      `SELECT page AS value, count() AS visitors
       FROM (SELECT argMax(path, event_time) AS page FROM events WHERE ${window} AND event_name = 'PageView' GROUP BY visitor)
       GROUP BY page ORDER BY visitors DESC, value LIMIT {top:UInt32}`,
      params,
    ),
  ]);
  return {
    visitors: Number(totals?.visitors ?? 0),
    pageviews: Number(totals?.pageviews ?? 0),
    pages: pages.map((row) => ({ value: row.value, visitors: Number(row.visitors) })),
  };
}
