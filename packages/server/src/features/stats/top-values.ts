import type { STATS_DIMENSIONS, StatsBreakdownRow } from '@partner/shared-schemas';
import type { Clickhouse } from '../../db/clickhouse/client.js';

type Dimension = (typeof STATS_DIMENSIONS)[number];

export interface TopValuesQuery {
  merchantId: string;
  /** The instants read, [start, end) in ms. */
  start: number;
  end: number;
  names: readonly string[];
  dimension: Dimension;
  limit: number;
}

const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * The time condition: on whole UTC days or hours when the range allows it, so ClickHouse answers
 * from a projection (`pages_daily`, `sources_daily`, `hourly`); otherwise on the events.
 */
function during(query: TopValuesQuery): string {
  if (query.dimension !== 'event_name' && query.start % DAY === 0 && query.end % DAY === 0) {
    return "toDate(event_time) >= toDate(toDateTime({start:Int64}, 'UTC')) AND toDate(event_time) < toDate(toDateTime({end:Int64}, 'UTC'))";
  }
  if (query.start % HOUR === 0 && query.end % HOUR === 0) {
    return 'toStartOfHour(event_time) >= toDateTime({start:Int64}) AND toStartOfHour(event_time) < toDateTime({end:Int64})';
  }
  return 'event_time >= toDateTime64({startMs:Int64} / 1000, 3) AND event_time < toDateTime64({endMs:Int64} / 1000, 3)';
}

/**
 * Events and visitors per value of a dimension, the `limit` largest (ties by value, byte order),
 * and the rest summed into `other` (its visitors distinct over all its values). Page-view
 * dimensions count page views only: a name filter without `PageView` leaves them empty.
 */
export async function readTopValues(
  clickhouse: Clickhouse,
  query: TopValuesQuery,
): Promise<{ rows: StatsBreakdownRow[]; other: StatsBreakdownRow | null }> {
  const pageViews = query.dimension !== 'event_name';
  if (pageViews && query.names.length > 0 && !query.names.includes('PageView')) return { rows: [], other: null };
  const where = [
    'merchant_id = {merchant:UUID}',
    during(query),
    ...(pageViews
      ? ["event_name = 'PageView'"]
      : query.names.length > 0
        ? ['event_name IN {names:Array(String)}']
        : []),
  ].join(' AND ');
  const params = {
    merchant: query.merchantId,
    start: Math.floor(query.start / 1000),
    end: Math.floor(query.end / 1000),
    startMs: query.start,
    endMs: query.end,
    names: query.names,
    limit: query.limit,
  };
  const column = query.dimension;
  const top = await clickhouse.query<{ value: string; events: string; visitors: string }>(
    `SELECT ${column} AS value, count() AS events, uniq(visitor) AS visitors FROM events WHERE ${where}
     GROUP BY value ORDER BY events DESC, value LIMIT {limit:UInt32}`,
    params,
  );
  const rows = top.map((row) => ({ value: row.value, events: Number(row.events), visitors: Number(row.visitors) }));
  if (rows.length < query.limit) return { rows, other: null };
  const [rest] = await clickhouse.query<{ events: string; visitors: string }>(
    `SELECT count() AS events, uniq(visitor) AS visitors FROM events WHERE ${where} AND ${column} NOT IN {top:Array(String)}`,
    { ...params, top: rows.map((row) => row.value) },
  );
  const events = Number(rest?.events ?? 0);
  return { rows, other: events > 0 ? { value: 'other', events, visitors: Number(rest?.visitors ?? 0) } : null };
}
