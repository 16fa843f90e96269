import { EventNamesFilter, type STATS_DIMENSIONS, type StatsBreakdownResponse } from '@partner/shared-schemas';
import { type SQL, sql } from 'drizzle-orm';
import type { ReadDb } from '../../db/read-routing.js';
import { readRows } from '../../db/read-rows.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { DIMENSION_VALUES, FACT_COLUMNS, foldPendingStatsOf } from './fold.js';
import { type Segment, segmentsOf } from './levels.js';
import { statsRange } from './range.js';
import { nameFilter, segmentScan } from './series.js';
import { VisitorUnion } from './sketch.js';

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
 * `limit` summed into `other`. `event_name` reads the bucket table (not its all-names rows); the
 * page-view dimensions read `stat_dimensions`, so a filter without `PageView` leaves them empty.
 * Both at the coarsest levels that fit the range (levels.ts): a 30-day UTC range reads, per name or
 * dimension value, its whole weeks and the days at their edges (6 or 12 rows); a dimension's
 * 15-minute edges are read from the page views (dimensionRows).
 */
export async function statsBreakdown(
  reads: ReadDb,
  partner: AuthenticatedPartner,
  params: StatsBreakdownParams,
): Promise<StatsBreakdownResponse> {
  const names = EventNamesFilter.parse(params.events);
  await findOwnMerchant(reads.primary, partner, params.merchantId);
  // The fold writes: on the primary; the aggregates are read where it has been replayed (db/read-routing.ts).
  await foldPendingStatsOf(reads.primary, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const all = segmentsOf([range.start], range.end);
  // Rows t(value, events, visitors): whole weeks and days inside the range, hours (and, in a zone
  // whose midnight is not on the hour, the events of the 15-minute buckets) at its edges.
  let from: SQL | null = null;
  if (params.dimension === 'event_name') {
    const kept = sql`t.event_name <> '' and ${nameFilter(names, sql`t.event_name`)}`;
    from = sql`(select t.value, t.events, t.visitors
      from ${segmentScan(all, sql`stat_buckets`, params.merchantId, kept, sql`t.event_name as value, t.events, t.visitors`)}) t`;
  } else if (names.length === 0 || names.includes('PageView')) {
    from = dimensionRows(params.merchantId, params.dimension, all);
  }
  // One statement: per value its events and its sketches concatenated (two statements, events
  // first, then the top values' sketches, read the rows twice: 30 days of 977 paths, 25 -> 12 ms
  // in process). Grouped under "C": the default collation's comparisons were half the statement.
  const rows = from
    ? await reads.run(
        'stats',
        async (db) =>
          (
            await readRows(db, [
              sql`select t.value collate "C" as value, sum(t.events)::float8 as events,
                string_agg(t.visitors, ''::bytea) filter (where length(t.visitors) <> 16384) as sparse,
                string_agg(t.visitors, ''::bytea) filter (where length(t.visitors) = 16384) as dense
              from ${from} group by 1`,
            ])
          )[0] ?? [],
        { caughtUp: true },
      )
    : [];
  const ordered = rows.sort(
    (a, b) => Number(b.events) - Number(a.events) || (String(a.value) < String(b.value) ? -1 : 1),
  );
  const union = (part: typeof rows) => {
    const u = new VisitorUnion();
    for (const row of part) u.addConcatenated(row.sparse as Uint8Array | null, row.dense as Uint8Array | null);
    return u.count();
  };
  const rest = ordered.slice(params.limit);
  let otherEvents = 0;
  for (const row of rest) otherEvents += Number(row.events);
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    dimension: params.dimension,
    rows: ordered
      .slice(0, params.limit)
      .map((row) => ({ value: String(row.value), events: Number(row.events), visitors: union([row]) })),
    other: rest.length > 0 ? { value: 'other', events: otherEvents, visitors: union(rest) } : null,
  };
}

/**
 * A dimension's rows t(value, events, visitors) of the segments: `stat_dimensions` for the hours,
 * days and weeks; for 15-minute segments (the edges of a range in a zone whose midnight is not on
 * the hour: at most 45 minutes at each end) the page views themselves, one row each (the fold's
 * rules, DIMENSION_VALUES), as the fold keeps no 15-minute dimension rows (fold.ts DIMENSION_GRAINS).
 */
function dimensionRows(merchantId: string, dimension: string, segments: readonly Segment[]): SQL {
  const quarters = segments.filter((s) => s.grain === 15);
  const kept = segments.filter((s) => s.grain !== 15);
  const parts: SQL[] = [];
  if (kept.length > 0) {
    parts.push(sql`select t.value, t.events, t.visitors
      from ${segmentScan(kept, sql`stat_dimensions`, merchantId, sql`t.dimension = ${dimension}`, sql`t.value, t.events, t.visitors`)}`);
  }
  if (quarters.length > 0) {
    // Each edge a statement of its own: on a join with unnest(segments), or an OR of the edges, a
    // prepared statement's generic plan read every page view of the merchant and filtered the time
    // (2.5 s at 3M events); a single range is always in the index condition.
    const iso = (t: number) => new Date(t).toISOString();
    const edges = quarters.map(
      (s) => sql`select ${FACT_COLUMNS}
        from events e
        cross join lateral (select md5(e.muid) as md5) h
        where e.merchant_id = ${merchantId}::uuid and e.event_name = 'PageView'
          and e.event_time >= ${iso(s.lo)}::timestamptz and e.event_time < ${iso(s.hi)}::timestamptz`,
    );
    parts.push(sql`(with f as materialized (${sql.join(edges, sql` union all `)}
      ), dv as (${DIMENSION_VALUES})
      select dv.value, 1::bigint as events, dv.entry as visitors from dv where dv.dimension = ${dimension})`);
  }
  return sql`(${sql.join(parts, sql` union all `)}) t`;
}
