import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { rowsOf } from '../../../db/read-rows.js';

// `event_day_counts` holds delta rows (migration 0029; docs/decisions/day-count-deltas.md): every statement on events
// appends its own, readers sum(n) by (merchant_id, day, event_name).

/** Keys merged per statement. */
export const COMPACT_BATCH = 1_000;

/** Held (transaction-scoped, tried, never waited for) so one compaction runs at a time. */
const COMPACT_LOCK = 7316402037;

/**
 * Merges at most `batch` keys with unmerged rows, in one statement. The kept row is updated in place, never
 * re-inserted: a concurrent delete by day or by merchant follows the update and removes it too.
 */
export async function compactDayCounts(db: Database, batch = COMPACT_BATCH): Promise<number> {
  return db.transaction(async (tx) => {
    const [lock] = rowsOf<{ held: boolean }>(
      await tx.execute(sql`select pg_try_advisory_xact_lock(${COMPACT_LOCK}::bigint) as held`),
    );
    if (!lock?.held) return 0;
    const merged = rowsOf<{ row: string; n: string | number }>(
      await tx.execute(sql`
        with k as (
          select distinct merchant_id, day, event_name from event_day_counts where not merged limit ${batch}
        ), r as (
          select c.ctid as row, c.merchant_id, c.day, c.event_name,
            row_number() over (partition by c.merchant_id, c.day, c.event_name order by c.merged desc, c.ctid) as rank
          from event_day_counts c join k using (merchant_id, day, event_name)
        ), d as (
          delete from event_day_counts c using r
          where r.rank > 1 and c.merchant_id = r.merchant_id and c.day = r.day and c.event_name = r.event_name
            and c.ctid = r.row
          returning c.merchant_id, c.day, c.event_name, c.n
        ), s as (
          select merchant_id, day, event_name, sum(n) as n from d group by 1, 2, 3
        )
        update event_day_counts c set n = c.n + coalesce(s.n, 0), merged = true
        from r left join s using (merchant_id, day, event_name)
        where r.rank = 1 and c.merchant_id = r.merchant_id and c.day = r.day and c.event_name = r.event_name
          and c.ctid = r.row
        returning c.ctid::text as row, c.n`),
    );
    // An array literal of tids ("(page,item)" quoted: they hold a comma).
    const zero = merged.filter((m) => Number(m.n) === 0).map((m) => `"${m.row}"`);
    if (zero.length > 0) {
      await tx.execute(
        sql`delete from event_day_counts where ctid = any(${`{${zero.join(',')}}`}::tid[]) and merged and n = 0`,
      );
    }
    return merged.length;
  });
}
