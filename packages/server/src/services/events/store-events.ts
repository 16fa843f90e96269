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
 * Rows are sorted by key first so two concurrent batches take their index locks in the same order
 * (no deadlock between overlapping retries).
 */
export async function storeEvents(db: Database, rows: readonly EventInsertRow[]): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  if (rows.length === 0) return stored;
  const sorted = [...rows].sort((a, b) =>
    a.merchantId === b.merchantId ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.merchantId < b.merchantId ? -1 : 1,
  );
  const payload = JSON.stringify(
    sorted.map((r) => ({
      merchant_id: r.merchantId,
      id: r.id,
      tag_id: r.tagId,
      muid: r.muid,
      event_name: r.eventName,
      event_time: r.eventTime,
      raw_data: r.rawData,
    })),
  );
  const result = await db.execute(sql`
    with ins as (
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select merchant_id, id, tag_id, muid, event_name, event_time, raw_data
      from json_to_recordset(${payload}::json) as x(
        merchant_id uuid, id text, tag_id uuid, muid text, event_name text, event_time timestamptz, raw_data text
      )
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
