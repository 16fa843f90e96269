import type { StatsRevenue, StatsTotals } from '@partner/shared-schemas';
import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { readRows } from '../../db/read-rows.js';
import { pointArrays, type Segment, segmentArrays, segmentsOf } from './levels.js';
import { VisitorUnion, visitorsOf } from './sketch.js';
import { type CountedPoint, type CountedRow, keepPointVisitors, keepVisitorCounts } from './visitor-counts.js';

/** `event_name` of `alias` kept by a filter (`names` empty: all). */
export function nameFilter(names: readonly string[], alias = sql`event_name`) {
  return names.length === 0
    ? sql`true`
    : sql`${alias} in (select json_array_elements_text(${JSON.stringify(names)}::json))`;
}

/** The segments as rows `s(grain, lo, hi, p)`. */
function segmentRows(segments: readonly Segment[]): SQL {
  const a = segmentArrays(segments);
  return sql`unnest(${a.grains}::int[], ${a.los}::timestamptz[], ${a.his}::timestamptz[], ${a.ps}::int[]) as s(grain, lo, hi, p)`;
}

/**
 * Rows `s(grain, lo, hi, p)` of the segments, each with `columns` of the rows of `table` (alias `t`)
 * of the merchant inside it that `where` keeps: one index range scan per segment. `offset 0` keeps
 * the planner from flattening the lateral subquery into a join, which it planned as a scan of all
 * the merchant's rows (one merchant, 1M events: a 90-day series in 137 ms, 25 ms this way).
 */
export function segmentScan(
  segments: readonly Segment[],
  table: SQL,
  merchantId: string,
  where: SQL,
  columns: SQL,
): SQL {
  return sql`${segmentRows(segments)} cross join lateral (select ${columns} from ${table} t
      where t.merchant_id = ${merchantId}::uuid and t.grain = s.grain and t.bucket >= s.lo and t.bucket < s.hi
        and ${where} offset 0) t`;
}

/**
 * The totals of each point [starts[i], starts[i+1]) (the last ending at `end`) from the aggregates,
 * each point read as whole weeks, UTC days, hours and 15-minute edges (levels.ts). Unfiltered, the events
 * and sketches come from the all-names rows (''), page views and purchases from their names' rows;
 * filtered, from the rows of the names. Counts summed and sketches concatenated in SQL (one row per
 * point), their union counted here; revenue summed exactly in SQL. A point of one row takes the
 * row's kept count when it has one, else counts its sketch and has `keep` (the primary) keep it; a
 * finished point of several rows the same way, while its rows are the ones counted (visitor-counts.ts).
 */
export async function readSeries(
  db: Database,
  merchantId: string,
  starts: readonly number[],
  end: number,
  names: readonly string[],
  keep: Database,
): Promise<StatsTotals[]> {
  const segments = segmentsOf(starts, end);
  const withRevenue = names.length === 0 || names.includes('Purchase');
  const all = names.length === 0;
  // Point counts are kept for reads of all names or one (a dashboard's): combinations of names
  // would each keep rows of their own.
  const key = all ? '' : new Set(names).size === 1 ? JSON.stringify([names[0]]) : null;
  const [buckets = [], revenue = []] = await readRows(db, [
    bucketRows(segments, merchantId, names, key, pointArrays(starts, end)),
    withRevenue
      ? sql`select s.p, t.currency, sum(t.amount)::text as amount
        from ${segmentScan(segments, sql`stat_revenue`, merchantId, sql`true`, sql`t.currency, t.amount`)}
        group by 1, 2 order by 1, 2`
      : sql`select 1 where false`,
  ]);
  const points: StatsTotals[] = starts.map(() => ({ events: 0, visitors: 0, pageviews: 0, purchases: 0, revenue: [] }));
  const counts: CountedRow[] = [];
  const unions = new Map<number, { union: VisitorUnion; print: string | null }>();
  for (const row of buckets) {
    const point = points[Number(row.p) - 1];
    if (!point) continue;
    point.events += Number(row.events ?? 0);
    point.pageviews += Number(row.pageviews ?? 0);
    point.purchases += Number(row.purchases ?? 0);
    // One row: one chunk. Its kept count, else its sketch counted and the count kept.
    if (Number(row.sketches) === 1 && row.kept !== null) {
      point.visitors = Number(row.kept);
    } else if (Number(row.sketches) === 1) {
      point.visitors = visitorsOf(row.sparse as Uint8Array | null, row.dense as Uint8Array | null);
      counts.push({
        grain: Number(row.grain),
        bucket: String(row.bucket),
        eventName: String(row.event_name),
        events: Number(row.row_events),
        length: Number(row.length),
        visitors: point.visitors,
      });
    } else if (row.point_kept !== null) {
      point.visitors = Number(row.point_kept);
    } else {
      const entry = unions.get(Number(row.p)) ?? { union: new VisitorUnion(), print: row.print as string | null };
      unions.set(Number(row.p), entry);
      entry.union.addConcatenated(row.sparse as Uint8Array | null, row.dense as Uint8Array | null);
    }
  }
  // Counts of finished points of a day or more are kept (an hour of 15-minute rows is cheap to
  // count); the current point's rows change with every fold.
  const now = Date.now();
  const pointCounts: CountedPoint[] = [];
  for (const [p, { union, print }] of unions) {
    const visitors = union.count();
    points[p - 1]!.visitors = visitors;
    const hi = starts[p] ?? end;
    if (print !== null && hi <= now && hi - starts[p - 1]! >= 23 * 3_600_000)
      pointCounts.push({ lo: new Date(starts[p - 1]!).toISOString(), hi: new Date(hi).toISOString(), print, visitors });
  }
  for (const row of revenue) {
    points[Number(row.p) - 1]?.revenue.push({
      currency: String(row.currency),
      amount: String(row.amount),
    } satisfies StatsRevenue);
  }
  await keepVisitorCounts(keep, merchantId, counts);
  if (key !== null) await keepPointVisitors(keep, merchantId, key, pointCounts);
  return points;
}

/**
 * Per point and chunk its counts, its rows' kept counts and its sketches (only where no count is
 * to be taken): a point's rows in chunks of 16 buckets of a level (at most 256 KB of dense sketches
 * a row; postgres.js took 20-25 ms for one row of 1.3 MB and 1.5-6 for the same bytes in 13 rows).
 * `n`: per point its counted rows, their print (visitor-counts.ts) and the count kept with it.
 */
function bucketRows(
  segments: readonly Segment[],
  merchantId: string,
  names: readonly string[],
  key: string | null,
  bounds: { los: string; his: string },
): SQL {
  const all = names.length === 0;
  const rows = all ? sql`t.event_name in ('', 'PageView', 'Purchase')` : nameFilter(names, sql`t.event_name`);
  const counted = all ? sql`t.event_name = ''` : sql`true`;
  // Sketches only of the points with no count to take: neither a kept row count nor a kept point count.
  const sketched = sql`${counted} and (n.sketches > 1 and n.kept is null or n.sketches = 1 and t.visitor_count is null)`;
  const columns = sql`t.grain, t.bucket, t.event_name, t.events, t.visitors, t.visitor_count, t.xmin::text as xmin`;
  return sql`with r as materialized (
        select s.p, t.*, extract(epoch from t.bucket)::bigint / (60 * 16 * t.grain) as chunk
        from ${segmentScan(segments, sql`stat_buckets`, merchantId, rows, columns)}
      ), n as (${
        // No key, or every segment one bucket (a UTC daily series): no point count to look up (1 ms
        // of 6); a point of several rows is then counted, not kept (its print is null).
        key === null || segments.every((s) => s.hi - s.lo === s.grain * 60_000)
          ? sql`select t.p, count(*)::int as sketches, null::uuid as print, null::int as kept
            from r t where ${counted} group by 1`
          : sql`select c.p, c.sketches, c.print, k.visitors as kept
            from (select t.p, count(*)::int as sketches,
                md5(concat_ws(':', count(*), sum(t.events), sum(length(t.visitors)), sum(t.xmin::text::bigint)))::uuid as print
              from r t where ${counted} group by 1) c
            join unnest(${bounds.los}::timestamptz[], ${bounds.his}::timestamptz[]) with ordinality as b(lo, hi, p)
              on b.p = c.p
            left join stat_point_visitors k on c.sketches > 1 and k.merchant_id = ${merchantId}::uuid
              and k.names = ${key} and k.lo = b.lo and k.hi = b.hi and k.print = c.print`
      })
      select t.p, n.sketches, n.print::text as print, n.kept as point_kept,
        (sum(t.events) filter (where ${counted}))::float8 as events,
        (sum(t.events) filter (where t.event_name = 'PageView'))::float8 as pageviews,
        (sum(t.events) filter (where t.event_name = 'Purchase'))::float8 as purchases,
        min(t.visitor_count) filter (where ${counted}) as kept,
        min(t.grain) filter (where ${counted}) as grain,
        min(t.bucket::text) filter (where ${counted}) as bucket,
        min(t.event_name) filter (where ${counted}) as event_name,
        (min(t.events) filter (where ${counted}))::float8 as row_events,
        min(length(t.visitors)) filter (where ${counted}) as length,
        string_agg(t.visitors, ''::bytea) filter (where ${sketched} and length(t.visitors) <> 16384) as sparse,
        string_agg(t.visitors, ''::bytea) filter (where ${sketched} and length(t.visitors) = 16384) as dense
      from r t left join n on n.p = t.p
      group by t.p, n.sketches, n.print, n.kept, t.chunk`;
}
