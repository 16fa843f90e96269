import type { StatsBreakdownRow, StatsDimension } from '@partner/shared-schemas';
import type { Clickhouse } from '../../db/clickhouse/client.js';
import { type Scope, timeFormOf, VISIT_PAGE, whereOf } from './where.js';

export interface TopValuesQuery extends Scope {
  dimension: StatsDimension;
  limit: number;
}

type Row = { value: string; events: string; visitors: string; visits: string };

const rowOf = (row: Row): StatsBreakdownRow => ({
  value: row.value,
  events: Number(row.events),
  visitors: Number(row.visitors),
  visits: Number(row.visits),
});

/**
 * Events, visitors and visits per value of a dimension, the `limit` largest (ties by value, byte
 * order), and the rest summed into `other` (its visitors and visits distinct over all its values).
 * Every dimension but `event_name` counts page views: a name filter without `PageView` leaves them
 * empty. `entry_page` and `exit_page` count visits by their first or last page view.
 * A range of whole UTC days (hours for `event_name`) is read from the projections
 * (`pages_daily`, `sources_daily`, `hourly`) when nothing else is filtered.
 */
export async function readTopValues(
  clickhouse: Clickhouse,
  query: TopValuesQuery,
): Promise<{ rows: StatsBreakdownRow[]; other: StatsBreakdownRow | null }> {
  const pageViews = query.dimension !== 'event_name';
  if (pageViews && query.names.length > 0 && !query.names.includes('PageView')) return { rows: [], other: null };
  const scope = pageViews ? { ...query, names: ['PageView'] } : query;
  const page = VISIT_PAGE[query.dimension as keyof typeof VISIT_PAGE];
  const daily = timeFormOf([query.start, query.end]);
  const form = page ? 'instant' : pageViews ? daily : daily === 'instant' ? 'instant' : 'hour';
  const { where, params } = whereOf(scope, form);
  params.limit = query.limit;
  // Per value: [value, events, visitors, visits] of a source of rows, and the same for `other`.
  const source = page
    ? `(SELECT ${page} AS value, visit, any(visitor) AS visitor FROM events WHERE ${where} GROUP BY visit)`
    : `(SELECT ${query.dimension} AS value, visit, visitor FROM events WHERE ${where})`;
  const top = await clickhouse.query<Row>(
    `SELECT value, count() AS events, uniq(visitor) AS visitors, uniq(visit) AS visits FROM ${source}
     GROUP BY value ORDER BY events DESC, value LIMIT {limit:UInt32}`,
    params,
  );
  const rows = top.map(rowOf);
  if (rows.length < query.limit) return { rows, other: null };
  const [rest] = await clickhouse.query<Omit<Row, 'value'>>(
    `SELECT count() AS events, uniq(visitor) AS visitors, uniq(visit) AS visits FROM ${source}
     WHERE value NOT IN {top:Array(String)}`,
    { ...params, top: rows.map((row) => row.value) },
  );
  const events = Number(rest?.events ?? 0);
  return { rows, other: events > 0 ? rowOf({ value: 'other', ...(rest as Omit<Row, 'value'>) }) : null };
}
