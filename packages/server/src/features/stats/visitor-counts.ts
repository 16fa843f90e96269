import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';

/** A `stat_buckets` row whose sketch a read counted, as the read saw it. */
export interface CountedRow {
  grain: number;
  bucket: string;
  eventName: string;
  /** The row's `events` and sketch length when read: a fold or retention since changed them. */
  events: number;
  length: number;
  visitors: number;
}

/**
 * Keeps the counts a read made of single-row points (migration 0033), on the primary: the next read
 * of these rows takes the count, not the 16 KB sketch. Only where the row is as it was read (a fold
 * since adds events; retention empties the sketch), and never waiting for a row a fold holds.
 */
export async function keepVisitorCounts(db: Database, merchantId: string, rows: readonly CountedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.execute(sql`
    update stat_buckets t set visitor_count = k.visitors
    from (
      select b.ctid, v.visitors
      from json_to_recordset(${JSON.stringify(rows)}::json)
        as v(grain int, bucket timestamptz, "eventName" text, events bigint, length int, visitors int)
      join stat_buckets b on b.merchant_id = ${merchantId}::uuid and b.grain = v.grain and b.bucket = v.bucket
        and b.event_name = v."eventName" and b.events = v.events and length(b.visitors) = v.length
        and b.visitor_count is null
      for update of b skip locked
    ) k
    where t.ctid = k.ctid`);
}

/** A multi-row point a read counted: its bounds, the print of the rows it united, their union's count. */
export interface CountedPoint {
  lo: string;
  hi: string;
  print: string;
  visitors: number;
}

/**
 * Keeps the counts a read made of finished multi-row points (migration 0035), on the primary. A
 * later read takes one only while its rows' print is the same (series.ts), so a fold, a recount,
 * retention or an erasure since (each gives a row a new xmin) is never read through a stale count.
 * In `lo` order: two reads keeping the same points lock them in the same order.
 */
export async function keepPointVisitors(
  db: Database,
  merchantId: string,
  names: string,
  points: readonly CountedPoint[],
): Promise<void> {
  if (points.length === 0) return;
  const sorted = [...points].sort((a, b) => (a.lo < b.lo ? -1 : 1));
  await db.execute(sql`
    insert into stat_point_visitors (merchant_id, names, lo, hi, print, visitors)
    select ${merchantId}::uuid, ${names}, v.lo, v.hi, v.print, v.visitors
    from json_to_recordset(${JSON.stringify(sorted)}::json) as v(lo timestamptz, hi timestamptz, print uuid, visitors int)
    on conflict (merchant_id, names, lo, hi) do update set print = excluded.print, visitors = excluded.visitors`);
}
