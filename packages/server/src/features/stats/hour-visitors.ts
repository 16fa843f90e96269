import type { Clickhouse } from '../../db/clickhouse/client.js';

const HOUR = 3_600_000;

/**
 * Visitors of each whole UTC hour starting at `hours` (ms), one statement: `uniq(visitor)` grouped by
 * `toStartOfHour(event_time)`, as the hourly timeseries counts a point (so the `hourly` projection
 * can answer it). An hour without events is 0.
 */
export async function readHourVisitors(
  clickhouse: Clickhouse,
  merchantId: string,
  hours: readonly number[],
): Promise<Map<number, number>> {
  const counts = new Map<number, number>(hours.map((hour) => [hour, 0]));
  if (hours.length === 0) return counts;
  const params: Record<string, unknown> = { merchant: merchantId };
  const ranges = hours.map((hour, i) => {
    params[`h${i}`] = Math.floor(hour / HOUR) * 3600;
    return `(toStartOfHour(event_time) = toDateTime({h${i}:Int64}, 'UTC'))`;
  });
  const rows = await clickhouse.query<{ hour: string | number; visitors: string }>(
    `SELECT toUnixTimestamp(toStartOfHour(event_time)) AS hour, uniq(visitor) AS visitors
     FROM events
     WHERE merchant_id = {merchant:UUID} AND (${ranges.join(' OR ')})
     GROUP BY hour`,
    params,
  );
  for (const row of rows) counts.set(Number(row.hour) * 1000, Number(row.visitors));
  return counts;
}
