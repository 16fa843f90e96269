import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { AGGREGATE_UPSERTS, FACT_COLUMNS } from './fold.js';

/** SQLSTATEs a recount retries: a concurrent fold changed a row it read (40001) or locks crossed (40P01). */
const RETRIED = new Set(['40001', '40P01']);
const ATTEMPTS = 8;

function sqlStateOf(error: unknown): string | undefined {
  for (let e = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Recomputes a merchant's statistics for whole 15-minute buckets from the events left in them (the
 * visitor sketches cannot be decremented, so an erasure recounts every bucket its events were in).
 * One REPEATABLE READ transaction: the buckets' rows of `stat_buckets`, `stat_revenue` and
 * `stat_dimensions` are deleted, then rebuilt by the fold's own rules (fold.ts) from the bucket's
 * events that are not pending (`stat_pending`: a later fold adds those). A fold that commits
 * meanwhile onto these rows makes the transaction fail to serialize, and it runs again; a fold
 * adding a row the recount also adds meets it in the upsert (its pending events were left out
 * here). `buckets` are ISO 8601 instants on the 15-minute grid.
 */
export async function recountBuckets(db: Database, merchantId: string, buckets: readonly string[]): Promise<void> {
  if (buckets.length === 0) return;
  const list = sql`(select value::timestamptz from json_array_elements_text(${JSON.stringify(buckets)}::json))`;
  for (let attempt = 1; ; attempt++) {
    try {
      await db.transaction(
        async (tx) => {
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
        },
        { isolationLevel: 'repeatable read' },
      );
      return;
    } catch (error) {
      const state = sqlStateOf(error);
      if (attempt >= ATTEMPTS || !state || !RETRIED.has(state)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt * Math.random()));
    }
  }
}
