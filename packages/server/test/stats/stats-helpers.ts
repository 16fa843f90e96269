import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/db/read-rows.js';
import type { TestServer } from '../../src/testing/index.js';
import { type ApiResponse, api } from '../helpers/api.js';

export type StatsQuery = Record<string, string | number | undefined>;

/** GET /v1/partners/stats/<kind> with the query (undefined values left out). */
export function getStats(
  server: TestServer,
  kind: 'summary' | 'timeseries' | 'breakdown',
  query: StatsQuery,
  key = server.partner.apiKey,
): Promise<ApiResponse> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return api(server, key).get(`/v1/partners/stats/${kind}?${params}`);
}

/** Rows of one statement on the test server's database. */
export async function query<T>(server: TestServer, statement: ReturnType<typeof sql>): Promise<T[]> {
  return rowsOf<T>(await server.app.deps.db.execute(statement));
}

export interface Expected {
  events: number;
  visitors: number;
  pageviews: number;
  purchases: number;
  revenue: { currency: string; amount: string }[];
}

/**
 * The totals counted over the stored events, the local day bounds computed by PostgreSQL itself
 * (`timestamp AT TIME ZONE zone`), independent of the server's zone code.
 */
export async function countStored(
  server: TestServer,
  merchantId: string,
  from: { date: string; time?: string },
  to: { date: string; time?: string },
  timezone: string,
  names: string[] = [],
): Promise<Expected> {
  const start = `${from.date} ${from.time ?? '00:00'}`;
  const end = to.time ? `${to.date} ${to.time}` : null;
  const filter = names.length
    ? sql`and event_name in (select json_array_elements_text(${JSON.stringify(names)}::json))`
    : sql``;
  const where = sql`merchant_id = ${merchantId}
    and event_time >= (${start}::timestamp at time zone ${timezone})
    and event_time < ${end ? sql`(${end}::timestamp at time zone ${timezone})` : sql`((${to.date}::date + 1)::timestamp at time zone ${timezone})`}
    ${filter}`;
  const [counts] = await query<Record<string, string | number>>(
    server,
    sql`select count(*)::int as events, count(distinct muid)::int as visitors,
      count(*) filter (where event_name = 'PageView')::int as pageviews,
      count(*) filter (where event_name = 'Purchase')::int as purchases
      from events where ${where}`,
  );
  const revenue = await query<{ currency: string; amount: string }>(
    server,
    sql`select upper(raw_data::jsonb->>'currency') as currency, sum((raw_data::jsonb->>'value')::numeric)::text as amount
      from events where ${where} and event_name = 'Purchase' and raw_data::jsonb ? 'currency'
      group by 1 order by 1`,
  );
  return {
    events: Number(counts!.events),
    visitors: Number(counts!.visitors),
    pageviews: Number(counts!.pageviews),
    purchases: Number(counts!.purchases),
    revenue,
  };
}

/** The API's totals against the stored count: exact, visitors within `tolerance`. */
export function sameTotals(actual: Expected, expected: Expected, tolerance = 0.02): boolean {
  const visitorsOk =
    expected.visitors === 0
      ? actual.visitors === 0
      : Math.abs(actual.visitors - expected.visitors) / expected.visitors <= tolerance;
  return (
    visitorsOk &&
    actual.events === expected.events &&
    actual.pageviews === expected.pageviews &&
    actual.purchases === expected.purchases &&
    JSON.stringify(actual.revenue) === JSON.stringify(expected.revenue)
  );
}
