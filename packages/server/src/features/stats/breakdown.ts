import { EventNamesFilter, type STATS_DIMENSIONS, type StatsBreakdownResponse } from '@partner/shared-schemas';
import { type SQL, sql } from 'drizzle-orm';
import type { ReadDb } from '../../db/read-routing.js';
import { readRows } from '../../db/read-rows.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { foldAllPendingStats } from './fold.js';
import { statsRange } from './range.js';
import { nameFilter } from './series.js';
import { emptyRegisters, estimate, mergeInto } from './sketch.js';

export interface StatsBreakdownParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  dimension: (typeof STATS_DIMENSIONS)[number];
  limit: number;
}

/**
 * Events and visitors per value of a dimension, largest first (ties by value), the values past
 * `limit` summed into `other`. `event_name` reads the bucket table; the page-view dimensions read
 * `stat_dimensions`, so a filter without `PageView` leaves them empty.
 */
export async function statsBreakdown(
  reads: ReadDb,
  partner: AuthenticatedPartner,
  params: StatsBreakdownParams,
): Promise<StatsBreakdownResponse> {
  const names = EventNamesFilter.parse(params.events);
  await findOwnMerchant(reads.primary, partner, params.merchantId);
  // The fold writes: on the primary; the aggregates are read where it has been replayed (db/read-routing.ts).
  await foldAllPendingStats(reads.primary);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const from = new Date(range.start).toISOString();
  const to = new Date(range.end).toISOString();
  const inRange = sql`merchant_id = ${params.merchantId} and bucket >= ${from}::timestamptz and bucket < ${to}::timestamptz`;
  let statement: SQL | null = null;
  if (params.dimension === 'event_name') {
    statement = sql`select event_name as value, events::float8 as events, visitors from stat_buckets where ${inRange} and ${nameFilter(names)}`;
  } else if (names.length === 0 || names.includes('PageView')) {
    statement = sql`select value, events::float8 as events, visitors from stat_dimensions where ${inRange} and dimension = ${params.dimension}`;
  }
  const rows = statement
    ? await reads.run('stats', async (db) => (await readRows(db, [statement]))[0] ?? [], { caughtUp: true })
    : [];
  const events = new Map<string, number>();
  for (const row of rows) {
    const value = String(row.value);
    events.set(value, (events.get(value) ?? 0) + Number(row.events));
  }
  const ordered = [...events].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const top = new Map(ordered.slice(0, params.limit).map(([value]) => [value, emptyRegisters()]));
  const rest = ordered.length > params.limit ? emptyRegisters() : null;
  for (const row of rows) mergeInto(top.get(String(row.value)) ?? rest!, row.visitors as Uint8Array);
  let otherEvents = 0;
  for (const [, n] of ordered.slice(params.limit)) otherEvents += n;
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    dimension: params.dimension,
    rows: ordered
      .slice(0, params.limit)
      .map(([value, n]) => ({ value, events: n, visitors: estimate(top.get(value)!) })),
    other: rest ? { value: 'other', events: otherEvents, visitors: estimate(rest) } : null,
  };
}
