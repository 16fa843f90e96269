import { Param, sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import type { EventInsertRow } from '../../../runtime/event-queue.js';
import { clientText, type OutboxRange, type StoredEvent } from '../../stats/store.js';

/** Numbers a transaction holds per merchant (`events_take_seqs`, migration 0026). */
export const SEQS_PER_TRANSACTION = 8192;

/**
 * THE insert of tracking events: one statement for a whole batch, idempotent by `(merchant_id, id)`. Readers stop
 * below the horizon (`events_horizon_seq()`), so commits in any order never let a resume skip.
 */
export async function storeEvents(
  db: Database,
  rows: readonly EventInsertRow[],
  stats?: StatsSink,
): Promise<Map<string, number>> {
  const stored = new Map<string, number>();
  if (rows.length === 0) return stored;
  if (rows.length > SEQS_PER_TRANSACTION) {
    const perMerchant = new Map<string, number>();
    for (const row of rows) perMerchant.set(row.merchantId, (perMerchant.get(row.merchantId) ?? 0) + 1);
    if (Math.max(...perMerchant.values()) > SEQS_PER_TRANSACTION) {
      // In array order, one statement (and transaction) per slice: later slices commit later.
      for (let from = 0; from < rows.length; from += SEQS_PER_TRANSACTION) {
        const part = await storeEvents(db, rows.slice(from, from + SEQS_PER_TRANSACTION), stats);
        for (const [tagId, n] of part) stored.set(tagId, (stored.get(tagId) ?? 0) + n);
      }
      return stored;
    }
  }
  const { numbered, perMerchant, payload, merchants, tags } = statementPayload(rows);
  const result = await db.execute(sql`
    with x as (
      select (${new Param([...merchants.keys()])}::text[])[r.m]::uuid as merchant_id, r.i as id,
        (${new Param([...tags.keys()])}::text[])[r.t]::uuid as tag_id, r.u as muid, r.e as event_name, r.at as event_time,
        r.d as raw_data, coalesce(r.c, 'not_required') as consent, r.k as client, r.n
      from json_to_recordset(${payload}::json) as r(m int, i text, t int, u text, e text, at timestamptz, d text, c event_consent, k text, n int)
    ), o as (
      select events_take_seqs(${perMerchant}::int) - 1 as before
    ), ids as (
      -- Idempotency by (merchant_id, id) whatever the event_time (events is partitioned by it,
      -- migration 0028): the ids go in first, and only the events whose ids this statement won.
      insert into event_ids (merchant_id, id, event_time)
      select x.merchant_id, x.id, x.event_time from x
      -- A visitor under erasure (or suppressed) is dropped: one probe of erasures_muid_idx per row.
      where not exists (
        select 1 from erasures s
        where s.muid = x.muid and (s.suppressed_until is null or s.suppressed_until > now())
          and (s.merchant_id = x.merchant_id
            or (s.merchant_id is null and s.partner_id = (select m.partner_id from merchants m where m.id = x.merchant_id))))
      order by x.merchant_id, x.id
      on conflict do nothing
      returning merchant_id, id
    ), ins as (
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, consent, client, seq)
      select x.merchant_id, x.id, x.tag_id, x.muid, x.event_name, x.event_time, x.raw_data, x.consent, x.client, o.before + x.n
      from x join ids on ids.merchant_id = x.merchant_id and ids.id = x.id cross join o
      -- No conflict to check and no order needed: events has no unique key (event_ids is the only
      -- one, migration 0028), so its inserts wait on no one.
      returning merchant_id, seq, tag_id, event_time
    )${
      stats
        ? sql`, outbox as (
      insert into stats_outbox (merchant_id, first_seq, last_seq)
      select merchant_id, min(seq), max(seq) from ins group by merchant_id
    )
    select tag_id::text as tag_id, count(*)::int as stored, array_agg(ins.seq - o.before)::int[] as ns,
      min(o.before)::float8 as before
    from ins cross join o group by tag_id`
        : sql`
    select tag_id::text as tag_id, count(*)::int as stored from ins group by tag_id`
    }`);
  const resultRows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
    tag_id: string;
    stored: number | string;
    ns?: number[];
    before?: number;
  }[];
  for (const row of resultRows) stored.set(row.tag_id, Number(row.stored));
  if (stats) handToStats(stats, numbered, resultRows);
  return stored;
}

/** The statement's rows: per merchant the distinct ids in array order, numbered `n = 1..k`. */
function statementPayload(rows: readonly EventInsertRow[]) {
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
  // A Map keeps insertion order: its keys are the id arrays the indexes point into.
  const merchants = new Map<string, number>();
  const tags = new Map<string, number>();
  const indexOf = (index: Map<string, number>, id: string) => {
    let at = index.get(id);
    if (at === undefined) {
      at = index.size + 1;
      index.set(id, at);
    }
    return at;
  };
  const payload = JSON.stringify(
    numbered.map(({ row: r, n }) => ({
      m: indexOf(merchants, r.merchantId),
      i: r.id,
      t: indexOf(tags, r.tagId),
      u: r.muid,
      e: r.eventName,
      at: r.eventTime,
      d: r.rawData,
      c: r.consent === 'not_required' ? undefined : r.consent,
      k: clientText(r.client) ?? undefined,
      n,
    })),
  );
  return { numbered, perMerchant: Math.max(...counts.values()), payload, merchants, tags };
}

/** What the statistics are handed after a commit (features/stats/store.ts). */
export interface StatsSink {
  record(events: StoredEvent[], ranges: OutboxRange[]): void;
}

/** Hands the rows just committed to the statistics: per tag, the numbers `n` the statement stored. */
function handToStats(
  stats: StatsSink,
  numbered: readonly { row: EventInsertRow; n: number }[],
  results: readonly { tag_id: string; ns?: number[]; before?: number }[],
): void {
  const byTagAndN = new Map<string, EventInsertRow>();
  for (const { row, n } of numbered) byTagAndN.set(`${row.tagId}\u0000${n}`, row);
  const events: StoredEvent[] = [];
  const ranges = new Map<string, OutboxRange>();
  for (const result of results) {
    for (const n of result.ns ?? []) {
      const row = byTagAndN.get(`${result.tag_id}\u0000${n}`);
      if (!row) continue;
      const seq = Number(result.before) + n;
      events.push({ ...storedOf(row), seq });
      const range = ranges.get(row.merchantId);
      if (!range) ranges.set(row.merchantId, { merchantId: row.merchantId, firstSeq: seq, lastSeq: seq });
      else {
        range.firstSeq = Math.min(range.firstSeq, seq);
        range.lastSeq = Math.max(range.lastSeq, seq);
      }
    }
  }
  stats.record(events, [...ranges.values()]);
}

function storedOf(row: EventInsertRow): Omit<StoredEvent, 'seq'> {
  return {
    merchantId: row.merchantId,
    muid: row.muid,
    eventName: row.eventName,
    eventTime: row.eventTime,
    rawData: row.rawData,
    consent: row.consent ?? 'not_required',
    client: row.client,
  };
}
