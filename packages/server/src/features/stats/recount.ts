import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { aggregateUpserts, DIMENSION_GRAINS, FACT_COLUMNS, GRAINS, RECOUNT_LOCK_CLASS } from './fold.js';

const EPOCH = sql`timestamptz '1970-01-01 00:00:00+00'`;
const HOUR = 3_600_000;
const QUARTER = 900_000;

/**
 * Recomputes a merchant's statistics for the whole hours holding `buckets` (ISO 8601 instants on
 * the 15-minute grid) from the events left in them: the visitor sketches cannot be decremented, so
 * an erasure recounts every bucket its events were in. `stat_buckets` and `stat_revenue` are
 * rebuilt at 15 minutes and `stat_dimensions` (no 15-minute level, fold.ts DIMENSION_GRAINS) at
 * hours, by the fold's own rules (fold.ts), from the events that are not pending (`stat_pending`:
 * a later fold adds those at every level, as it does events stored after this statement); then
 * the coarser rows holding them from those rows (counts summed, sketches united by
 * `stats_hll_union`), so every level agrees.
 * One transaction that first takes the merchant's RECOUNT_LOCK_CLASS lock exclusively: it waits
 * for the folds folding that merchant to commit, and until it commits no fold takes the merchant's
 * pending ranges (they skip them, or a stats read's fold waits).
 */
export async function recountBuckets(db: Database, merchantId: string, buckets: readonly string[]): Promise<void> {
  const hours = [...new Set(buckets.map((b) => Math.floor(Date.parse(b) / HOUR) * HOUR))].sort((a, b) => a - b);
  if (hours.length === 0) return;
  const quarters = hours.flatMap((h) => [0, 1, 2, 3].map((q) => new Date(h + q * QUARTER).toISOString()));
  const instants = (list: readonly string[]) =>
    sql`(select value::timestamptz from json_array_elements_text(${JSON.stringify(list)}::json))`;
  const quarterList = instants(quarters);
  const hourList = instants(hours.map((h) => new Date(h).toISOString()));
  const merchant = sql`merchant_id = ${merchantId}::uuid`;
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${RECOUNT_LOCK_CLASS}::int, hashtext(${merchantId}::text))`);
    for (const table of ['stat_buckets', 'stat_revenue']) {
      await tx.execute(sql`
        delete from ${sql.identifier(table)} where ${merchant} and grain = 15 and bucket in ${quarterList}`);
    }
    await tx.execute(sql`delete from stat_dimensions where ${merchant} and grain = 60 and bucket in ${hourList}`);
    await tx.execute(sql`
      with f as materialized (
        select ${FACT_COLUMNS}
        from ${quarterList} as k(bucket)
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
      ), ${aggregateUpserts([15], [60])}
      select count(*) from f`);
    // The coarser rows holding them, rebuilt from the rows just rebuilt (their `finest` level).
    const keysAt = (grains: readonly number[], finest: number) =>
      sql`(select distinct g.grain, date_bin(make_interval(mins => g.grain), k.bucket, ${EPOCH}) as bucket
      from ${hourList} as k(bucket) cross join unnest(${`{${grains.filter((g) => g > finest).join(',')}}`}::int[]) g(grain))`;
    const keys = keysAt(GRAINS, 15);
    const dimensionKeys = keysAt(DIMENSION_GRAINS, 60);
    const span = (finest: number) =>
      sql`s.grain = ${finest} and s.bucket >= k.bucket and s.bucket < k.bucket + make_interval(mins => k.grain)`;
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
      from ${keys} k join stat_buckets s on s.merchant_id = ${merchantId}::uuid and ${span(15)}
      group by 1, 2, 3, 4`);
    await tx.execute(sql`
      insert into stat_revenue (merchant_id, grain, bucket, currency, purchases, amount)
      select s.merchant_id, k.grain, k.bucket, s.currency, sum(s.purchases), sum(s.amount)
      from ${keys} k join stat_revenue s on s.merchant_id = ${merchantId}::uuid and ${span(15)}
      group by 1, 2, 3, 4`);
    await tx.execute(sql`
      insert into stat_dimensions (merchant_id, dimension, grain, bucket, value, events, visitors)
      select s.merchant_id, s.dimension, k.grain, k.bucket, s.value, sum(s.events), stats_hll_union(s.visitors)
      from ${dimensionKeys} k join stat_dimensions s on s.merchant_id = ${merchantId}::uuid and ${span(60)}
      group by 1, 2, 3, 4, 5`);
  });
}
