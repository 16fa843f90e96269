import type { Clickhouse } from '../../db/clickhouse/client.js';
import { type GoalDefinition, goalCondition } from './goal-sql.js';
import { type Scope, whereOf } from './where.js';

/**
 * Visitors who reached each step after every one before it, in order, within `windowMs` of their
 * first step (ClickHouse's `windowFunnel`, exact counts); steps counted in `scope` only.
 */
export async function readFunnelSteps(
  clickhouse: Clickhouse,
  scope: Scope,
  steps: readonly GoalDefinition[],
  windowMs: number,
): Promise<number[]> {
  const { where, params } = whereOf(scope, 'instant');
  params.window = windowMs;
  const conditions = steps.map((goal, i) => goalCondition(goal, `s${i}`, params));
  const rows = await clickhouse.query<{ level: number; visitors: string }>(
    `SELECT level, count() AS visitors FROM (
       SELECT windowFunnel({window:UInt64})(toUInt64(toUnixTimestamp64Milli(event_time)), ${conditions.join(', ')}) AS level
       FROM events WHERE ${where} AND (${conditions.join(' OR ')}) GROUP BY visitor
     ) WHERE level > 0 GROUP BY level`,
    params,
  );
  const reached = steps.map(() => 0);
  for (const row of rows) {
    for (let step = 0; step < Number(row.level); step++) reached[step]! += Number(row.visitors);
  }
  return reached;
}
