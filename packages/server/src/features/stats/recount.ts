import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { aggregateUpserts, DIMENSION_GRAINS, FACT_COLUMNS, GRAINS, RECOUNT_LOCK_CLASS } from './fold.js';

const EPOCH = sql`timestamptz '1970-01-01 00:00:00+00'`;

/**
 * Recomputes a merchant's statistics for whole 15-minute buckets from the events left in them (the
 * visitor sketches cannot be decremented, so an erasure recounts every bucket its events were in),
 * then the hourly, daily (and the dimensions' weekly) rows holding those buckets from the 15-minute
 * rows (counts summed, sketches united by `stats_hll_union`), so every level agrees.
 * One transaction that first takes the merchant's RECOUNT_LOCK_CLASS lock exclusively: it waits
 * for the folds folding that merchant to commit, and until it commits no fold takes the merchant's
 * pending ranges (they skip them, or a stats read's fold waits). The buckets' rows of `stat_buckets`,
 * `stat_revenue` and `stat_dimensions` are then deleted and rebuilt by the fold's own rules
 * (fold.ts) from the bucket's events that are not pending (`stat_pending`: a later fold adds those
 * at every level, as it does events stored after this statement). `buckets` are ISO 8601 instants
 * on the 15-minute grid.
 */
export async function recountBuckets(db: Database, merchantId: string, buckets: readonly string[]): Promise<void> {
  if (buckets.length === 0) return;
  const list = sql`(select value::timestamptz from json_array_elements_text(${JSON.stringify(buckets)}::json))`;
  const merchant = sql`merchant_id = ${merchantId}::uuid`;
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${RECOUNT_LOCK_CLASS}::int, hashtext(${merchantId}::text))`);
    for (const table of ['stat_buckets', 'stat_revenue', 'stat_dimensions']) {
      await tx.execute(sql`
        delete from ${sql.identifier(table)} where ${merchant} and grain = 15 and bucket in ${list}`);
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
      ), ${aggregateUpserts([15])}
      select count(*) from f`);
    // The hours and days (and the dimensions' weeks) holding the buckets, rebuilt from their 15-minute rows.
    const keysAt = (
      grains: readonly number[],
    ) => sql`(select distinct g.grain, date_bin(make_interval(mins => g.grain), k.bucket, ${EPOCH}) as bucket
      from ${list} as k(bucket) cross join unnest(${`{${grains.filter((g) => g > 15).join(',')}}`}::int[]) g(grain))`;
    const keys = keysAt(GRAINS);
    const dimensionKeys = keysAt(DIMENSION_GRAINS);
    const span = sql`s.grain = 15 and s.bucket >= k.bucket and s.bucket < k.bucket + make_interval(mins => k.grain)`;
    for (const [table, at] of [
      ['stat_buckets', keys],
      ['stat_revenue', keys],
      ['stat_dimensions', dimensionKeys],
    ] as const) {
      await tx.execute(sql`
        delete from ${sql.identifier(table)} t using ${at} k
        where t.merchant_id = ${merchantId}::uuid and t.grain = k.grain and t.bucket = k.bucket`);
    }
    await tx.execute(sql`
      insert into stat_buckets (merchant_id, grain, bucket, event_name, events, visitors)
      select s.merchant_id, k.grain, k.bucket, s.event_name, sum(s.events), stats_hll_union(s.visitors)
      from ${keys} k join stat_buckets s on s.merchant_id = ${merchantId}::uuid and ${span}
      group by 1, 2, 3, 4`);
    await tx.execute(sql`
      insert into stat_revenue (merchant_id, grain, bucket, currency, purchases, amount)
      select s.merchant_id, k.grain, k.bucket, s.currency, sum(s.purchases), sum(s.amount)
      from ${keys} k join stat_revenue s on s.merchant_id = ${merchantId}::uuid and ${span}
      group by 1, 2, 3, 4`);
    await tx.execute(sql`
      insert into stat_dimensions (merchant_id, dimension, grain, bucket, value, events, visitors)
      select s.merchant_id, s.dimension, k.grain, k.bucket, s.value, sum(s.events), stats_hll_union(s.visitors)
      from ${dimensionKeys} k join stat_dimensions s on s.merchant_id = ${merchantId}::uuid and ${span}
      group by 1, 2, 3, 4, 5`);
  });
}
