import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { AGGREGATE_UPSERTS, FACT_COLUMNS, RECOUNT_LOCK_CLASS } from './fold.js';

/**
 * Recomputes a merchant's statistics for whole 15-minute buckets from the events left in them (the
 * visitor sketches cannot be decremented, so an erasure recounts every bucket its events were in).
 * One transaction that first takes the merchant's RECOUNT_LOCK_CLASS lock exclusively: it waits
 * for the folds folding that merchant to commit, and until it commits no fold takes the merchant's
 * pending ranges (they skip them, or a stats read's fold waits). The buckets' rows of `stat_buckets`,
 * `stat_revenue` and `stat_dimensions` are then deleted and rebuilt by the fold's own rules
 * (fold.ts) from the bucket's events that are not pending (`stat_pending`: a later fold adds those,
 * as it does events stored after this statement). `buckets` are ISO 8601 instants on the 15-minute grid.
 */
export async function recountBuckets(db: Database, merchantId: string, buckets: readonly string[]): Promise<void> {
  if (buckets.length === 0) return;
  const list = sql`(select value::timestamptz from json_array_elements_text(${JSON.stringify(buckets)}::json))`;
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${RECOUNT_LOCK_CLASS}::int, hashtext(${merchantId}::text))`);
    for (const table of ['stat_buckets', 'stat_revenue', 'stat_dimensions']) {
      await tx.execute(sql`
        delete from ${sql.identifier(table)} where merchant_id = ${merchantId}::uuid and bucket in ${list}`);
    }
    await tx.execute(sql`
      with f as materialized (
        select ${FACT_COLUMNS}
        from ${list} as k(bucket)
        cross join lateral (
          select * from events
          where merchant_id = ${merchantId}::uuid
            and event_time >= k.bucket and event_time < k.bucket + interval '15 minutes'
            and not exists (
              select 1 from stat_pending p
              where p.merchant_id = ${merchantId}::uuid and events.seq between p.first_seq and p.last_seq)
          offset 0
        ) e
        cross join lateral (select md5(e.muid) as md5) h
      ), ${AGGREGATE_UPSERTS}
      select count(*) from f`);
  });
}
