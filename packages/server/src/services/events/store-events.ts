import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';

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
 * `event_seqs` once, by the number of its new rows, and numbers those rows in the batch's array
 * order (so the events of one request keep their order). The bump's row lock, held to commit,
 * orders one merchant's commits; no lock is shared by all merchants. The bump and the rows run in
 * merchant order, so concurrent batches lock in one order (no deadlock between overlapping
 * retries). A row skipped at the last moment by a concurrent insert of the same id leaves a gap
 * in `seq`, which readers (`seq > last`) do not mind.
 */
export async function storeEvents(db: Database, rows: readonly EventInsertRow[]): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  if (rows.length === 0) return stored;
  const payload = JSON.stringify(
    rows.map((r, ord) => ({
      merchant_id: r.merchantId,
      id: r.id,
      tag_id: r.tagId,
      muid: r.muid,
      event_name: r.eventName,
      event_time: r.eventTime,
      raw_data: r.rawData,
      ord,
    })),
  );
  const result = await db.execute(sql`
    with x as (
      select * from json_to_recordset(${payload}::json) as x(
        merchant_id uuid, id text, tag_id uuid, muid text, event_name text, event_time timestamptz, raw_data text, ord int
      )
    ), fresh as (
      select distinct on (x.merchant_id, x.id) x.* from x
      where not exists (select 1 from events e where e.merchant_id = x.merchant_id and e.id = x.id)
      order by x.merchant_id, x.id, x.ord
    ), numbered as (
      select f.*, row_number() over (partition by f.merchant_id order by f.ord) as n,
        count(*) over (partition by f.merchant_id) as total
      from fresh f
    ), bump as (
      insert into event_seqs as s (merchant_id, last_seq)
      select merchant_id, count(*) from fresh group by merchant_id order by merchant_id
      on conflict (merchant_id) do update set last_seq = s.last_seq + excluded.last_seq
      returning merchant_id, last_seq
    ), ins as (
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
      select n.merchant_id, n.id, n.tag_id, n.muid, n.event_name, n.event_time, n.raw_data, b.last_seq - n.total + n.n
      from numbered n join bump b on b.merchant_id = n.merchant_id
      order by n.merchant_id, n.id
      on conflict do nothing
      returning tag_id
    )
    select tag_id::text as tag_id, count(*)::int as stored from ins group by tag_id`);
  const resultRows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    tag_id: string;
    stored: number | string;
  }[];
  for (const row of resultRows) stored.set(row.tag_id, Number(row.stored));
  return stored;
}
