import type { StatsRevenue, StatsTotals } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { readRows } from '../../db/read-rows.js';
import { emptyRegisters, estimate, mergeInto } from './sketch.js';

/** SQL text of the instants as a `timestamptz[]` literal. */
function instantArray(starts: readonly number[]): string {
  return `{${starts.map((t) => new Date(t).toISOString()).join(',')}}`;
}

/** `event_name` kept by a filter (`names` empty: all). */
export function nameFilter(names: readonly string[]) {
  return names.length === 0
    ? sql`true`
    : sql`event_name in (select json_array_elements_text(${JSON.stringify(names)}::json))`;
}

/**
 * The totals of each point [starts[i], starts[i+1]) (the last ending at `end`) from the aggregates:
 * counts summed, sketches merged, revenue summed exactly in SQL.
 */
export async function readSeries(
  db: Database,
  merchantId: string,
  starts: readonly number[],
  end: number,
  names: readonly string[],
): Promise<StatsTotals[]> {
  const thresholds = instantArray(starts);
  const from = new Date(starts[0]!).toISOString();
  const to = new Date(end).toISOString();
  const withRevenue = names.length === 0 || names.includes('Purchase');
  const [buckets = [], revenue = []] = await readRows(db, [
    sql`select width_bucket(bucket, ${thresholds}::timestamptz[]) as p, event_name, events::float8 as events, visitors
      from stat_buckets
      where merchant_id = ${merchantId} and bucket >= ${from}::timestamptz and bucket < ${to}::timestamptz and ${nameFilter(names)}`,
    withRevenue
      ? sql`select width_bucket(bucket, ${thresholds}::timestamptz[]) as p, currency, sum(amount)::text as amount
        from stat_revenue
        where merchant_id = ${merchantId} and bucket >= ${from}::timestamptz and bucket < ${to}::timestamptz
        group by 1, 2 order by 1, 2`
      : sql`select 1 where false`,
  ]);
  const points = starts.map(() => ({ events: 0, pageviews: 0, purchases: 0, registers: null as Uint8Array | null }));
  for (const row of buckets) {
    const point = points[Number(row.p) - 1];
    if (!point) continue;
    const events = Number(row.events);
    point.events += events;
    if (row.event_name === 'PageView') point.pageviews += events;
    else if (row.event_name === 'Purchase') point.purchases += events;
    point.registers ??= emptyRegisters();
    mergeInto(point.registers, row.visitors as Uint8Array);
  }
  const money = starts.map((): StatsRevenue[] => []);
  for (const row of revenue)
    money[Number(row.p) - 1]?.push({ currency: String(row.currency), amount: String(row.amount) });
  return points.map((point, i) => ({
    events: point.events,
    visitors: point.registers ? estimate(point.registers) : 0,
    pageviews: point.pageviews,
    purchases: point.purchases,
    revenue: money[i]!,
  }));
}
