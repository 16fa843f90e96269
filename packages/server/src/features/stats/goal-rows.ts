import type { Clickhouse } from '../../db/clickhouse/client.js';
import { type GoalDefinition, goalCondition } from './goal-sql.js';
import type { TopValuesQuery } from './top-values.js';
import { VISIT_PAGE, whereOf } from './where.js';

/** What a breakdown row or `other` converted: events, and distinct visitors (`uniq`). */
export type RowConversions = Map<string, { conversions: number; visitors: number }>;

/** The key `other` is reported under (no value is this). */
export const OTHER = '\u0000other';

/**
 * A goal's conversions per value of the breakdown's `values` (the rest as OTHER): the goal's
 * events among each value's events, whatever their name (a visit's value for the visit's
 * dimensions, the event's own for the others); for entry and exit pages, in the visits they began
 * or ended.
 */
export async function readGoalRows(
  clickhouse: Clickhouse,
  query: TopValuesQuery,
  goal: GoalDefinition,
  values: readonly string[],
): Promise<RowConversions> {
  const { where, params } = whereOf(query, 'instant');
  const converts = goalCondition(goal, 'goal', params);
  params.values = values;
  const page = VISIT_PAGE[query.dimension as keyof typeof VISIT_PAGE];
  const source = page
    ? `(SELECT ${page} AS value, any(visitor) AS visitor, countIf(${converts}) AS c FROM events WHERE ${where} GROUP BY visit)`
    : `(SELECT ${query.dimension} AS value, visitor, toUInt64(${converts}) AS c FROM events WHERE ${where})`;
  const rows = await clickhouse.query<{ key: string; conversions: string; visitors: string }>(
    `SELECT if(value IN {values:Array(String)}, value, {other:String}) AS key, sum(c) AS conversions,
       uniqIf(visitor, c > 0) AS visitors
     FROM ${source} GROUP BY key`,
    { ...params, other: OTHER },
  );
  return new Map(
    rows.map((row) => [row.key, { conversions: Number(row.conversions), visitors: Number(row.visitors) }]),
  );
}
