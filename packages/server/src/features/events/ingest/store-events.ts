import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { BatchAggregates } from '../../stats/batch-aggregates.js';

/** One row for the events table, as the ingestion queue hands it to `storeEvents`. */
export interface EventInsertRow {
  merchantId: string;
  tagId: string;
  id: string;
  muid: string;
  eventName: string;
  /** ISO 8601 instant. */
  eventTime: string;
  /** The event's `data` serialised as JSON text. */
  rawData: string;
}

/**
 * THE insert of tracking events: one statement for a whole batch, idempotent by `(merchant_id, id)`
 * (a stored id is skipped, as is a repeat inside the batch). The rows travel as one JSON parameter
 * read by `json_to_recordset`, which works the same on postgres.js and PGlite and is several times
 * faster than a drizzle multi-row insert. Returns how many rows were stored per tag.
 *
 * `seq` is per merchant (migration 0008): the statement bumps each written merchant's row in
 * `event_seqs` once, by the number of the batch's distinct ids of that merchant, and the rows take
 * the bumped range in the batch's array order (so the events of one request keep their order).
 * The numbering (`n` of `k` per merchant, first occurrence of a repeated id) is done here, not in
 * SQL: the statement has no anti-join, sort or window of its own, and reads `events` only
 * through the primary key's conflict check, whatever plan a young table gets (issue 37;
 * figures in bench/README.md).
 * The bump's row lock, held to commit, orders one merchant's commits; no lock is shared by all
 * merchants. The bump and the rows run in merchant order, so concurrent batches lock in one order
 * (no deadlock between overlapping retries). An id already stored (a retried batch, or a row
 * skipped at the last moment by a concurrent insert of the same id) leaves its number unused: a
 * gap in `seq`, which readers (`seq > last`) do not mind.
 *
 * The same statement keeps the statistics aggregates (migration 0017): the batch is grouped in JS
 * (features/stats/batch-aggregates.ts) and each aggregate table takes one upsert, counting only the
 * rows `ins` really inserted. Those upserts read `ins`, so they run once the bump holds its merchants'
 * rows: two statements touching one merchant's aggregates are ordered by that lock.
 */
export async function storeEvents(db: Database, rows: readonly EventInsertRow[]): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  if (rows.length === 0) return stored;
  // Per merchant: the distinct ids in array order (n = 1..k), then k on each of its rows.
  const counts = new Map<string, number>();
  const seen = new Set<string>();
  const numbered: { row: EventInsertRow; n: number }[] = [];
  for (const row of rows) {
    const key = `${row.merchantId}\u0000${row.id}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const n = (counts.get(row.merchantId) ?? 0) + 1;
    counts.set(row.merchantId, n);
    numbered.push({ row, n });
  }
  const aggregates = new BatchAggregates();
  const payload = JSON.stringify(
    numbered.map(({ row: r, n }) => ({
      ...aggregates.add(r.merchantId, r.eventName, r.eventTime, r.muid, r.rawData),
      merchant_id: r.merchantId,
      id: r.id,
      tag_id: r.tagId,
      muid: r.muid,
      event_name: r.eventName,
      event_time: r.eventTime,
      raw_data: r.rawData,
      n,
      k: counts.get(r.merchantId),
    })),
  );
  const groups = aggregates.payloads();
  const result = await db.execute(sql`
    with x as (
      select * from json_to_recordset(${payload}::json) as x(
        merchant_id uuid, id text, tag_id uuid, muid text, event_name text, event_time timestamptz, raw_data text, n int, k int,
        g int, d text, r int, a text
      )
    ), bump as (
      insert into event_seqs as s (merchant_id, last_seq)
      select merchant_id, max(k) from x group by merchant_id order by merchant_id
      on conflict (merchant_id) do update set last_seq = s.last_seq + excluded.last_seq
      returning merchant_id, last_seq
    ), ins as (
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
      select x.merchant_id, x.id, x.tag_id, x.muid, x.event_name, x.event_time, x.raw_data, b.last_seq - x.k + x.n
      from x join bump b on b.merchant_id = x.merchant_id
      order by x.merchant_id, x.id
      on conflict do nothing
      returning merchant_id, id, tag_id
    ), hit as (
      select x.g, x.d, x.r, x.a from ins join x on x.merchant_id = ins.merchant_id and x.id = ins.id
    ), stat_b as (
      insert into stat_buckets as t (merchant_id, bucket, event_name, events, visitors)
      select s.merchant_id, s.bucket, s.event_name, coalesce(c.n, 0), decode(s.v, 'hex')
      from json_to_recordset(${groups.buckets}::json) as s(i int, merchant_id uuid, bucket timestamptz, event_name text, v text)
      left join (select g, count(*) as n from hit group by g) c on c.g = s.i
      on conflict (merchant_id, bucket, event_name) do update
      set events = t.events + excluded.events, visitors = case
        when length(t.visitors) <> 16384 and length(t.visitors) + length(excluded.visitors) <= 6144 then t.visitors || excluded.visitors
        else stats_hll_merge(t.visitors, excluded.visitors) end
    ), stat_d as (
      insert into stat_dimensions as t (merchant_id, dimension, bucket, value, events, visitors)
      select s.merchant_id, s.dimension, s.bucket, s.value, coalesce(c.n, 0), decode(s.v, 'hex')
      from json_to_recordset(${groups.dimensions}::json) as s(i int, merchant_id uuid, dimension text, bucket timestamptz, value text, v text)
      left join (
        select u.i, count(*) as n from hit, unnest(string_to_array(hit.d, ',')::int[]) as u(i) where hit.d is not null group by u.i
      ) c on c.i = s.i
      on conflict (merchant_id, dimension, bucket, value) do update
      set events = t.events + excluded.events, visitors = case
        when length(t.visitors) <> 16384 and length(t.visitors) + length(excluded.visitors) <= 6144 then t.visitors || excluded.visitors
        else stats_hll_merge(t.visitors, excluded.visitors) end
    ), stat_r as (
      insert into stat_revenue as t (merchant_id, bucket, currency, purchases, amount)
      select s.merchant_id, s.bucket, s.currency, c.n, c.amount
      from json_to_recordset(${groups.revenue}::json) as s(i int, merchant_id uuid, bucket timestamptz, currency text)
      join (select r, count(*) as n, sum(a::numeric) as amount from hit where r is not null group by r) c on c.r = s.i
      on conflict (merchant_id, bucket, currency) do update
      set purchases = t.purchases + excluded.purchases, amount = t.amount + excluded.amount
    )
    select tag_id::text as tag_id, count(*)::int as stored from ins group by tag_id`);
  const resultRows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    tag_id: string;
    stored: number | string;
  }[];
  for (const row of resultRows) stored.set(row.tag_id, Number(row.stored));
  return stored;
}
