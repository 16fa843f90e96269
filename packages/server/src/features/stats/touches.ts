import type { StatsAttributionRow } from '@partner/shared-schemas';
import type { Clickhouse } from '../../db/clickhouse/client.js';
import { amountWithScale } from './points.js';
import { type Scope, whereOf } from './where.js';

export interface TouchesQuery extends Scope {
  model: 'first_touch' | 'last_touch';
  dimension: 'channel' | 'referrer' | 'utm_source' | 'utm_campaign';
  limit: number;
}

/**
 * Each visitor's first (or last) visit's value in the scope, with all their purchases in it
 * credited to that value: per value the visitors, purchases and exact revenue per currency, the
 * `limit` values with most purchases.
 */
export async function readTouches(clickhouse: Clickhouse, query: TouchesQuery): Promise<StatsAttributionRow[]> {
  const { where, params } = whereOf(query, 'instant');
  params.limit = query.limit;
  const pick = query.model === 'first_touch' ? 'argMin' : 'argMax';
  const touch = `SELECT visitor, ${pick}(${query.dimension}, (visit_start, event_time)) AS touch,
    countIf(event_name = 'Purchase') AS purchases FROM events WHERE ${where} GROUP BY visitor`;
  const top = await clickhouse.query<{ value: string; visitors: string; purchases: string }>(
    `SELECT touch AS value, count() AS visitors, sum(purchases) AS purchases FROM (${touch})
     GROUP BY value ORDER BY purchases DESC, visitors DESC, value LIMIT {limit:UInt32}`,
    params,
  );
  if (top.length === 0) return [];
  const revenue = await clickhouse.query<{ value: string; currency: string; revenue: string; scale: number }>(
    `SELECT t.touch AS value, currency, toString(sum(revenue)) AS revenue, max(revenue_scale) AS scale
     FROM events INNER JOIN (${touch}) AS t USING visitor
     WHERE ${where} AND event_name = 'Purchase' AND currency != '' AND t.touch IN {values:Array(String)}
     GROUP BY value, currency ORDER BY value, currency`,
    { ...params, values: top.map((row) => row.value) },
  );
  return top.map((row) => ({
    value: row.value,
    visitors: Number(row.visitors),
    purchases: Number(row.purchases),
    revenue: revenue
      .filter((r) => r.value === row.value)
      .map((r) => ({ currency: r.currency, amount: amountWithScale(r.revenue, Number(r.scale)) })),
  }));
}
