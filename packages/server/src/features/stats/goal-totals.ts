import type { Clickhouse } from '../../db/clickhouse/client.js';
import { type GoalDefinition, goalCondition } from './goal-sql.js';
import { type Scope, whereOf } from './where.js';

/** Per period (0: before `splitAt`, 1: from it): each goal's converting events and visitors. */
export type GoalSums = Map<string, { conversions: number[]; visitors: number[] }>;

/** Each goal's conversions and converting visitors (ClickHouse's `uniq`) before and from `splitAt`. */
export async function readGoalTotals(
  clickhouse: Clickhouse,
  scope: Scope,
  splitAt: number,
  goals: readonly GoalDefinition[],
): Promise<GoalSums> {
  const sums: GoalSums = new Map();
  if (goals.length === 0) return sums;
  const { where, params } = whereOf(scope, 'instant');
  params.split = splitAt;
  const columns = goals.map((goal, i) => {
    const c = goalCondition(goal, `g${i}`, params);
    return `countIf(${c}) AS c${i}, uniqIf(visitor, ${c}) AS v${i}`;
  });
  const rows = await clickhouse.query<Record<string, string | number>>(
    `SELECT toUInt8(event_time >= toDateTime64({split:Int64} / 1000, 3)) AS p, ${columns.join(', ')}
     FROM events WHERE ${where} GROUP BY p`,
    params,
  );
  for (const row of rows) {
    sums.set(String(row.p), {
      conversions: goals.map((_, i) => Number(row[`c${i}`])),
      visitors: goals.map((_, i) => Number(row[`v${i}`])),
    });
  }
  return sums;
}
