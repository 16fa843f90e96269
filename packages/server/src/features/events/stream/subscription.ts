import type { StreamedEvent } from '@partner/shared-schemas';
import { inArray, sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { readRawRows, rowsOf } from '../../../db/read-rows.js';
import { events } from '../../../db/schema/index.js';
import { AppError } from '../../../kernel/errors.js';
import type { HeldAccount, HeldBytes, HeldLimit } from '../../../runtime/held-bytes.js';
import { eventJson } from '../read/list-events.js';

/** Rows read per query while catching up. */
const PAGE_SIZE = 500;
/** Bytes a queued event costs besides its JSON: the Buffer and its backing store, the queue's entry. */
const EVENT_OVERHEAD_BYTES = 160;
/** A queued event is counted at twice its JSON. */
const READ_COPIES = 2;
/** The size assumed for rows before the first read: the largest event (16 KB of data). */
const LARGEST_EVENT_BYTES = 17_000;
/** A read fills at most this part of the stream's byte limit (pages sized by the last read's average). */
const READ_SHARE_OF_LIMIT = 8;
/** Rows committed above the horizon wait for an older transaction still in flight. */
const HELD_BACK_FIRST_MS = 10;
const HELD_BACK_MAX_MS = 1000;
/** Rows already committed above the horizon when a stream opens, remembered so they are not sent. */
const START_SKIP_MAX = 500;

/** An event as a stream holds it. */
export interface SerializedEvent {
  seq: number;
  json: Buffer;
}

/** The bytes an event is counted for while it waits in a stream's queue. */
const heldSizeOf = (event: SerializedEvent) => READ_COPIES * event.json.byteLength + EVENT_OVERHEAD_BYTES;

/** A Buffer of its own (never a slice of the shared pool, which a small Buffer would keep alive). */
function bufferOf(text: string): Buffer {
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  buffer.write(text);
  return buffer;
}

/** The bytes of a view in a Buffer of their own (the view keeps its whole read buffer alive). */
function copyOf(view: Buffer): Buffer {
  const buffer = Buffer.allocUnsafeSlow(view.length);
  view.copy(buffer);
  return buffer;
}

/** A stream's byte budget: its own limit (STREAM_BUFFER_BYTES) in the process's (HELD_BYTES). */
export interface StreamByteBudget {
  limit: number;
  held: HeldBytes;
}

/** A streamed event: the event list's fields plus `seq`, its ingestion-order id (also the SSE id). */
export type { StreamedEvent };

/**
 * Where a subscription is. It only moves forward:
 * `pending` -> (`catching-up` ->) `live` -> `ended`, and from any state straight to `ended`.
 * - `pending`: created, the hub is not listening yet; notifications only mark it `dirty`.
 * - `catching-up`: a resume behind the newest row; reads a page whenever the consumer emptied the
 *   buffer (the consumer's pace sets the read rate).
 * - `live`: caught up; each notification reads the new rows into the buffer.
 * - `ended`: closed, failed (the consumer's next read throws `failure`, once) or the hub shut down.
 */
export type SubscriptionState = 'pending' | 'catching-up' | 'live' | 'ended';

/**
 * One stream of a merchant's events, in ingestion (`seq`) order, exactly once. A consumer that lets that buffer
 * overflow gets STREAM_CONSUMER_TOO_SLOW and the stream ends, instead of memory growing.
 */
export class EventSubscription implements AsyncIterable<StreamedEvent> {
  private state: SubscriptionState = 'pending';
  /** Events read and not yet taken by the consumer. */
  private readonly queue: SerializedEvent[] = [];
  /** The seq of the last row read: the next read starts after it. */
  private lastSeq = 0;
  /** Rows newer than `lastSeq` may exist (a notification, or the last read filled its page). */
  private dirty = false;
  /** The highest seq the last read saw committed (at or above the horizon: held back). */
  private newest = 0;
  /** Rows committed above the horizon before a live start: not sent (they precede the stream). */
  private readonly skip = new Set<number>();
  private heldBackTimer: NodeJS.Timeout | null = null;
  private heldBackMs = 0;
  /** The read in flight, if any (one at a time). */
  private pumping: Promise<void> | null = null;
  private failure: unknown = null;
  private waiter: (() => void) | null = null;
  /** The queue's bytes in the process's budget (null: counted by events only). */
  private readonly account: HeldAccount | null;
  /** Rows per read, from the last read's average row size (keeps a read a small part of the byte limit). */
  private pageRows: number;
  private resolveEnded: () => void = () => {};
  /** Settles when the subscription ends (closed, failed, or the hub shut down). */
  readonly ended: Promise<void> = new Promise((resolve) => {
    this.resolveEnded = resolve;
  });

  constructor(
    private readonly db: Database,
    readonly merchantId: string,
    private readonly names: readonly string[],
    private readonly bufferLimit: number,
    /** Called once when the subscription ends (the hub forgets it). */
    private readonly onEnd: (subscription: EventSubscription) => void,
    bytes?: StreamByteBudget,
  ) {
    this.account = bytes ? bytes.held.open(bytes.limit, (limit) => this.fail(tooSlowError(limit, bytes.limit))) : null;
    this.pageRows = this.account ? this.rowsPerRead(READ_COPIES * LARGEST_EVENT_BYTES) : PAGE_SIZE;
  }

  /** Rows of `averageBytes` that fill a read's share of the byte limit (1 to PAGE_SIZE). */
  private rowsPerRead(averageBytes: number): number {
    if (!this.account) return PAGE_SIZE;
    const target = this.account.limit / READ_SHARE_OF_LIMIT;
    return Math.max(1, Math.min(PAGE_SIZE, Math.floor(target / Math.max(1, averageBytes))));
  }

  /** @internal Resolves the starting position; called by the hub once it is listening. */
  async start(afterSeq: number | undefined): Promise<void> {
    if (afterSeq === undefined) {
      // From now on: past the horizon (everything below it has committed), skipping the rows
      // already committed above it; a transaction still in flight commits after this, above it.
      const rows = rowsOf<{ horizon: string | number; seq: string | number | null }>(
        await this.db.execute(sql`
          select h.horizon::text as horizon, e.seq::text as seq
          from (select events_horizon_seq() as horizon) h
          left join lateral (
            select seq from events where merchant_id = ${this.merchantId}::uuid and seq >= h.horizon
            order by seq limit ${START_SKIP_MAX}
          ) e on true
          order by e.seq`),
      );
      this.lastSeq = Number(rows[0]?.horizon ?? 1) - 1;
      for (const row of rows) if (row.seq !== null) this.skip.add(Number(row.seq));
      // More than remembered: the rest is sent (a few events from before the start, never a gap).
      if (this.skip.size > 0) this.newest = Math.max(...this.skip);
      this.dirty = this.skip.size > 0;
    } else {
      this.lastSeq = afterSeq;
    }
    if (this.state !== 'pending') return;
    this.state = afterSeq === undefined ? 'live' : 'catching-up';
    this.pump();
  }

  /** True once the start position is fixed: an event committed from now on is delivered. */
  get isStarted(): boolean {
    return this.state === 'live' || this.state === 'catching-up';
  }

  /** The subscription's state (see `SubscriptionState`). */
  get current(): SubscriptionState {
    return this.state;
  }

  /** The seq of the last event read from the database (what the next read starts after). */
  get position(): number {
    return this.lastSeq;
  }

  /** @internal New rows for this merchant up to `maxSeq` (unknown: maybe) were committed. */
  notify(maxSeq?: number): void {
    if (this.state === 'ended' || (maxSeq !== undefined && maxSeq <= this.lastSeq)) return;
    if (maxSeq !== undefined && maxSeq > this.newest) this.newest = maxSeq;
    this.dirty = true;
    if (this.state === 'live') this.pump();
  }

  /** Ends the stream: the iterator finishes after nothing more (buffered events are dropped). */
  close(): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.queue.length = 0;
    if (this.heldBackTimer) clearTimeout(this.heldBackTimer);
    this.heldBackTimer = null;
    this.account?.close();
    this.onEnd(this);
    this.resolveEnded();
    this.wake();
  }

  /** Ends the stream with `error` (buffered events are dropped): the consumer's next read throws it. */
  fail(error: unknown): void {
    if (this.state === 'ended') return;
    this.failure = error;
    this.close();
  }

  /** Rows wait above the horizon: read again soon (backing off) even if no notification comes. */
  private holdBack(): void {
    if (this.heldBackTimer || this.state === 'ended') return;
    this.heldBackMs = Math.min(HELD_BACK_MAX_MS, this.heldBackMs === 0 ? HELD_BACK_FIRST_MS : this.heldBackMs * 2);
    this.heldBackTimer = setTimeout(() => {
      this.heldBackTimer = null;
      this.notify();
    }, this.heldBackMs);
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  private wantsRead(): boolean {
    if (this.state === 'live') return this.dirty;
    return this.state === 'catching-up' && this.queue.length === 0;
  }

  private pump(): void {
    if (this.pumping || !this.wantsRead()) return;
    this.pumping = (async () => {
      try {
        while (this.wantsRead()) {
          this.dirty = false;
          const page = Math.min(this.pageRows, this.bufferLimit);
          const limit = this.state === 'live' ? Math.min(page, this.bufferLimit - this.queue.length + 1) : page;
          const { rows, horizon, newest } = await this.read(limit);
          if (this.state === 'ended') return;
          let bytes = 0;
          for (const row of rows) {
            if (this.skip.delete(row.seq)) continue;
            this.queue.push(row);
            bytes += heldSizeOf(row);
          }
          if (rows.length > 0) this.pageRows = this.rowsPerRead(bytes / rows.length);
          // Over the stream's byte limit or the process's budget: ended here (fail) by the account.
          this.account?.take(bytes);
          if (this.current === 'ended') return;
          const last = rows.at(-1);
          if (last) this.lastSeq = last.seq;
          if (this.queue.length > this.bufferLimit) {
            this.fail(
              new AppError(
                'STREAM_CONSUMER_TOO_SLOW',
                `The consumer fell more than ${this.bufferLimit} events behind; reconnect with the last event id to resume`,
              ),
            );
            return;
          }
          if (rows.length === limit) this.dirty = true;
          else {
            // Everything below the horizon is read; what is committed above it waits for it.
            this.lastSeq = Math.max(this.lastSeq, horizon - 1);
            this.newest = Math.max(this.newest, newest);
            this.state = 'live';
            if (this.newest > this.lastSeq) this.holdBack();
            else this.heldBackMs = 0;
          }
          if (rows.length > 0) this.wake();
        }
      } catch (error) {
        this.fail(error);
      } finally {
        this.pumping = null;
        this.wake();
      }
      // A notification that arrived while the last read was in flight.
      this.pump();
    })();
  }

  /** The next rows after `lastSeq` below the horizon, the horizon, and the newest seq committed, in one statement. */
  private async read(limit: number): Promise<{ rows: SerializedEvent[]; horizon: number; newest: number }> {
    const names = this.names.length > 0 ? sql`and ${inArray(events.eventName, [...this.names])}` : sql``;
    const statement = sql`
      select h.horizon::text as horizon, h.newest::text as newest, e.seq::text as seq, e.json
      from (
        select events_horizon_seq() as horizon,
          (select max(seq) from events where merchant_id = ${this.merchantId}::uuid) as newest
      ) h
      left join lateral (
        select seq, ${eventJson('', sql`seq`)} as json from events
        where merchant_id = ${this.merchantId}::uuid and seq > ${this.lastSeq} and seq < h.horizon ${names}
        order by seq
        limit ${limit}
      ) e on true
      order by e.seq`;
    const rows: SerializedEvent[] = [];
    // On postgres.js the JSON is copied from the bytes read, never made a string in the heap.
    const raw = await readRawRows(this.db, statement);
    if (raw) {
      for (const [, , seq, json] of raw)
        if (seq && json) rows.push({ seq: Number(seq.toString('latin1')), json: copyOf(json) });
      const [horizon, newest] = raw[0] ?? [];
      return {
        rows,
        horizon: Number(horizon?.toString('latin1') ?? 0),
        newest: Number(newest?.toString('latin1') ?? 0),
      };
    }
    const result = rowsOf<{ horizon: string; newest: string | null; seq: string | null; json: string | null }>(
      await this.db.execute(statement),
    );
    for (const row of result)
      if (row.seq !== null && row.json !== null) rows.push({ seq: Number(row.seq), json: bufferOf(row.json) });
    return { rows, horizon: Number(result[0]?.horizon ?? 0), newest: Number(result[0]?.newest ?? 0) };
  }

  /** The next event; `null` once the stream ended. Throws the failure that ended it, once. */
  async next(): Promise<StreamedEvent | null> {
    const event = await this.nextSerialized();
    return event && (JSON.parse(event.json.toString('utf8')) as StreamedEvent);
  }

  /** The next event as held (its JSON); `null` once the stream ended. Throws the failure that ended it, once. */
  async nextSerialized(): Promise<SerializedEvent | null> {
    for (;;) {
      const event = this.queue.shift();
      if (event) {
        this.account?.give(heldSizeOf(event));
        if (this.state === 'catching-up' && this.queue.length === 0) this.pump();
        return event;
      }
      if (this.state === 'ended') {
        const failure = this.failure;
        this.failure = null;
        if (failure) throw failure;
        return null;
      }
      this.pump();
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  /** Bytes of events held for this stream's consumer now. */
  get heldBytes(): number {
    return this.account?.held ?? 0;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamedEvent> {
    try {
      for (;;) {
        const event = await this.next();
        if (!event) return;
        yield event;
      }
    } finally {
      this.close();
    }
  }

  /** The events as held, for a transport that writes their JSON as it is (the REST stream). */
  async *serialized(): AsyncGenerator<SerializedEvent> {
    try {
      for (;;) {
        const event = await this.nextSerialized();
        if (!event) return;
        yield event;
      }
    } finally {
      this.close();
    }
  }
}

/** The ending of a stream whose unsent events passed its byte limit or the process's budget. */
function tooSlowError(limit: HeldLimit, ownLimit: number): AppError {
  const why =
    limit === 'own'
      ? `The consumer fell behind by more than the ${ownLimit} bytes this server holds for one stream`
      : 'The server holds too much for slow consumers and this stream went longest without reading';
  return new AppError('STREAM_CONSUMER_TOO_SLOW', `${why}; reconnect with the last event id to resume`);
}
