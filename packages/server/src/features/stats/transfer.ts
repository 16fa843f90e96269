import { setTimeout as sleep } from 'node:timers/promises';
import type { EventConsent } from '@partner/shared-schemas';
import { Param, sql } from 'drizzle-orm';
import type { Clickhouse } from '../../db/clickhouse/client.js';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import type { Logger } from '../../kernel/logger.js';
import { eventsTsv } from './insert.js';
import { clientFromText, type StoredEvent } from './stored-event.js';
import { VisitAssigner } from './visits.js';

/** An outbox row's key: a merchant's seq range stored by one statement (`stats_outbox`). */
export interface OutboxRange {
  merchantId: string;
  firstSeq: number;
  lastSeq: number;
}

export interface TransferOptions {
  /** How soon queued events are sent (ms): one insert per flush, so larger is cheaper per event. */
  flushMs?: number;
  /** Events queued that are sent at once, without waiting for `flushMs`. */
  flushEvents?: number;
  /** Events held in memory at most (queued or being sent); past it they wait in PostgreSQL for the recovery. */
  maxQueued?: number;
  /** Of those, events of one merchant at most (default half): one merchant's flood leaves room for the others. */
  maxQueuedPerMerchant?: number;
  /** Deadline of one ClickHouse insert (ms): well within the storing process's claim (30 s). */
  insertTimeoutMs?: number;
}

const LIVEMODE_CACHE_MAX = 100_000;

/**
 * Moves stored events into ClickHouse exactly once. PostgreSQL is the record: the statement that
 * stores events also writes an outbox row per merchant and seq range, claimed for 30 s by the
 * storing process (features/events/ingest/store-events.ts). That process sends the rows it holds
 * (`record`), then deletes their outbox rows. Rows whose claim ran out (a crash, a ClickHouse
 * outage) are sent by `recover`, from PostgreSQL, after counting what of the range ClickHouse
 * already has: all of it (the crash came after the insert), none, or a part (then replaced).
 */
export class StatsTransfer {
  private queue: { events: StoredEvent[]; ranges: OutboxRange[] }[] = [];
  /** Events queued or being sent, in all and per merchant: counted until their insert ends. */
  private held = 0;
  private readonly heldBy = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly livemode = new Map<string, boolean>();
  private readonly visits: VisitAssigner;
  private readonly flushMs: number;
  private readonly flushEvents: number;
  private queued = 0;
  private readonly maxQueued: number;
  private readonly maxPerMerchant: number;
  private readonly insertTimeoutMs: number;

  constructor(
    private readonly db: Database,
    private readonly clickhouse: Clickhouse,
    private readonly logger: Logger,
    options: TransferOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 1_000;
    this.flushEvents = options.flushEvents ?? 20_000;
    this.maxQueued = options.maxQueued ?? 100_000;
    this.maxPerMerchant = options.maxQueuedPerMerchant ?? Math.ceil(this.maxQueued / 2);
    this.insertTimeoutMs = options.insertTimeoutMs ?? 10_000;
    this.visits = new VisitAssigner(clickhouse, clickhouse.kind === 'chdb');
  }

  /**
   * Queues events just stored (their outbox rows claimed by this process); sent within `flushMs`.
   * A merchant whose events would pass its share, or all events past the bound, are left to the
   * recovery: their outbox rows stay in PostgreSQL.
   */
  record(events: StoredEvent[], ranges: OutboxRange[]): void {
    if (ranges.length === 0) return;
    const counts = new Map<string, number>();
    for (const event of events) counts.set(event.merchantId, (counts.get(event.merchantId) ?? 0) + 1);
    const taken = new Set<string>();
    let total = this.held;
    for (const [merchantId, n] of counts) {
      if ((this.heldBy.get(merchantId) ?? 0) + n > this.maxPerMerchant || total + n > this.maxQueued) continue;
      taken.add(merchantId);
      total += n;
    }
    if (taken.size === 0) return;
    const mine = taken.size === counts.size ? events : events.filter((event) => taken.has(event.merchantId));
    const theirRanges = taken.size === counts.size ? ranges : ranges.filter((range) => taken.has(range.merchantId));
    this.queue.push({ events: mine, ranges: theirRanges });
    this.hold(mine, 1);
    this.queued += mine.length;
    if (this.queued >= this.flushEvents) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  private hold(events: readonly StoredEvent[], sign: 1 | -1): void {
    this.held += sign * events.length;
    for (const event of events) {
      const n = (this.heldBy.get(event.merchantId) ?? 0) + sign;
      if (n > 0) this.heldBy.set(event.merchantId, n);
      else this.heldBy.delete(event.merchantId);
    }
  }

  /** Sends what is queued now; resolves when every queued event is in ClickHouse or left to the recovery. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    this.queued = 0;
    this.flushing = this.flushing.then(() => (batch.length > 0 ? this.send(batch) : undefined));
    return this.flushing;
  }

  /**
   * Resolves once the events of `merchantId` that this process holds are sent (or left to the
   * recovery); at once when it holds none, so a read never waits on another merchant's insert.
   */
  flushed(merchantId: string): Promise<void> {
    return this.heldBy.has(merchantId) ? this.flush() : Promise.resolve();
  }

  private async send(batch: { events: StoredEvent[]; ranges: OutboxRange[] }[]): Promise<void> {
    const events = batch.flatMap((part) => part.events);
    const ranges = batch.flatMap((part) => part.ranges);
    try {
      await this.insert(events);
      await this.forgetRanges(ranges);
    } catch (error) {
      // The outbox rows stay claimed until their claim runs out; the recovery sends them then.
      this.logger.warn({ err: error, events: events.length }, 'statistics: events not sent to ClickHouse yet');
    } finally {
      this.hold(events, -1);
    }
  }

  /** Inserts events (typed by ClickHouse on their way from `events_in` to `events`); returns how many it sent. */
  private async insert(events: readonly StoredEvent[]): Promise<number> {
    const unknown = [...new Set(events.map((event) => event.merchantId))].filter((id) => !this.livemode.has(id));
    if (unknown.length > 0) {
      if (this.livemode.size + unknown.length > LIVEMODE_CACHE_MAX) this.livemode.clear();
      const rows = rowsOf<{ id: string; livemode: boolean }>(
        await this.db.execute(sql`select m.id::text as id, p.livemode from merchants m
          join partners p on p.id = m.partner_id where m.id = any(${new Param(unknown)}::uuid[])`),
      );
      for (const row of rows) this.livemode.set(row.id, row.livemode);
    }
    const visits = await this.visits.assign(events);
    // A merchant deleted since has no row: its purge removes whatever of it arrives.
    const { body, rows } = eventsTsv(events, visits, (id) => this.livemode.get(id) ?? true);
    await this.clickhouse.insertTsv('events_in', body, { timeoutMs: this.insertTimeoutMs });
    return rows;
  }

  private async forgetRanges(ranges: OutboxRange[]): Promise<void> {
    await this.db.execute(sql`delete from stats_outbox o
      using unnest(${new Param(ranges.map((r) => r.merchantId))}::uuid[], ${new Param(ranges.map((r) => r.firstSeq))}::bigint[]) as k(merchant_id, first_seq)
      where o.merchant_id = k.merchant_id and o.first_seq = k.first_seq`);
  }

  /**
   * Sends up to `limit` outbox ranges whose claim ran out, claiming them first. Returns how many
   * it took (`limit`: there may be more).
   */
  async recover(limit = 100, signal?: AbortSignal): Promise<number> {
    const claimed = rowsOf<{ merchant_id: string; first_seq: string; last_seq: string }>(
      await this.db.execute(sql`update stats_outbox o set claimed_until = now() + interval '60 seconds'
        from (select merchant_id, first_seq from stats_outbox where claimed_until < now()
          order by first_seq limit ${limit} for update skip locked) c
        where o.merchant_id = c.merchant_id and o.first_seq = c.first_seq
        returning o.merchant_id::text, o.first_seq::text, o.last_seq::text`),
    );
    for (const row of claimed) {
      if (signal?.aborted) break;
      const range = { merchantId: row.merchant_id, firstSeq: Number(row.first_seq), lastSeq: Number(row.last_seq) };
      await this.resend(range);
      await this.forgetRanges([range]);
    }
    return claimed.length;
  }

  /** Makes ClickHouse hold exactly PostgreSQL's events of one merchant's seq range. */
  async resend(range: OutboxRange): Promise<void> {
    const stored = rowsOf<{
      seq: string;
      muid: string;
      event_name: string;
      event_time: Date | string;
      raw_data: string;
      consent: EventConsent;
      client: string | null;
    }>(
      await this.db.execute(sql`select seq::text, muid, event_name, event_time, raw_data, consent, client from events
        where merchant_id = ${range.merchantId}::uuid and seq between ${range.firstSeq} and ${range.lastSeq}`),
    );
    const events = stored.map((row) => ({
      merchantId: range.merchantId,
      seq: Number(row.seq),
      muid: row.muid,
      eventName: row.event_name,
      eventTime: row.event_time instanceof Date ? row.event_time.toISOString() : new Date(row.event_time).toISOString(),
      rawData: row.raw_data,
      consent: row.consent,
      client: clientFromText(row.client),
    }));
    const bounds = { m: range.merchantId, first: range.firstSeq, last: range.lastSeq };
    const where = 'merchant_id = {m:UUID} AND seq BETWEEN {first:UInt64} AND {last:UInt64}';
    const [present] = await this.clickhouse.query<{ n: string }>(
      `SELECT count() AS n FROM events WHERE ${where}`,
      bounds,
    );
    const have = Number(present?.n ?? 0);
    if (have === eventsTsv(events, undefined, () => true).rows) return;
    if (have > 0) await this.clickhouse.command(`DELETE FROM events WHERE ${where}`, bounds, { timeoutMs: 60_000 });
    await this.insert(events);
  }

  /**
   * Waits until every outbox range of `merchantId` below `belowSeq` has been sent (an erasure or a
   * purge deletes from ClickHouse only after the events stored before it arrived there).
   */
  async settled(merchantId: string, belowSeq: number, deadlineMs: number): Promise<boolean> {
    const until = Date.now() + deadlineMs;
    for (;;) {
      const pending = rowsOf(
        await this.db.execute(sql`select 1 from stats_outbox
          where merchant_id = ${merchantId}::uuid and first_seq < ${belowSeq} limit 1`),
      );
      if (pending.length === 0) return true;
      if (Date.now() > until) return false;
      await this.flush();
      await sleep(100);
    }
  }

  /** Sends what is queued and stops the timer. */
  async close(): Promise<void> {
    await this.flush();
  }
}
