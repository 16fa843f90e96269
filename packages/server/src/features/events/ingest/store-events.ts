import type { EventConsent } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';

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
  /** The consent state it was collected under; absent: `not_required` (also rows logged before consent existed). */
  consent?: EventConsent | undefined;
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
 * Events of a visitor whose erasure is running, or who is suppressed (`erasures`, migration 0022),
 * are dropped here, on both paths (direct and log writer), their numbers left unused like a repeat's.
 *
 * For the statistics, the statement also records per merchant the `seq` range it inserted
 * (`stat_pending`, one small row); features/stats/fold.ts adds those events to the aggregates later,
 * off this path.
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
  const payload = JSON.stringify(
    numbered.map(({ row: r, n }) => ({
      merchant_id: r.merchantId,
      id: r.id,
      tag_id: r.tagId,
      muid: r.muid,
      event_name: r.eventName,
      event_time: r.eventTime,
      raw_data: r.rawData,
      consent: r.consent ?? 'not_required',
      n,
      k: counts.get(r.merchantId),
    })),
  );
  const result = await db.execute(sql`
    with x as (
      select * from json_to_recordset(${payload}::json) as x(
        merchant_id uuid, id text, tag_id uuid, muid text, event_name text, event_time timestamptz, raw_data text, consent event_consent, n int, k int
      )
    ), bump as (
      insert into event_seqs as s (merchant_id, last_seq)
      select merchant_id, max(k) from x group by merchant_id order by merchant_id
      on conflict (merchant_id) do update set last_seq = s.last_seq + excluded.last_seq
      returning merchant_id, last_seq
    ), ins as (
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, consent, seq)
      select x.merchant_id, x.id, x.tag_id, x.muid, x.event_name, x.event_time, x.raw_data, x.consent, b.last_seq - x.k + x.n
      from x join bump b on b.merchant_id = x.merchant_id
      -- A visitor under erasure (or suppressed) is dropped: one probe of erasures_muid_idx per row.
      where not exists (
        select 1 from erasures s
        where s.muid = x.muid and (s.suppressed_until is null or s.suppressed_until > now())
          and (s.merchant_id = x.merchant_id
            or (s.merchant_id is null and s.partner_id = (select m.partner_id from merchants m where m.id = x.merchant_id))))
      order by x.merchant_id, x.id
      on conflict do nothing
      returning merchant_id, seq, tag_id
    ), pending as (
      insert into stat_pending (merchant_id, first_seq, last_seq)
      select merchant_id, min(seq), max(seq) from ins group by merchant_id
    )
    select tag_id::text as tag_id, count(*)::int as stored from ins group by tag_id`);
  const resultRows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    tag_id: string;
    stored: number | string;
  }[];
  for (const row of resultRows) stored.set(row.tag_id, Number(row.stored));
  return stored;
}
