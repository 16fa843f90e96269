import type { EventConsent } from '@partner/shared-schemas';
import { deadlineError } from '../db/deadline.js';
import { AppError, dataRejection, isConnectionError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';

/** One row for the events table, as the queue and the event log carry it to the store. */
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
  /** The visitor's client as the request told it; absent: unknown. */
  client?: EventClient | undefined;
}

/** What the request that brought an event tells of its client: never its address. */
export interface EventClient {
  /** ISO 3166-1 alpha-2. */
  country?: string | undefined;
  device?: 'desktop' | 'mobile' | 'tablet' | undefined;
  browser?: string | undefined;
  os?: string | undefined;
}

/** Stores rows in one statement, duplicates skipped, and answers how many rows each tag stored. */
export type StoreEventRows = (rows: EventInsertRow[]) => Promise<Map<string, number>>;

export interface EventQueueOptions {
  /** Events held at once (queued plus being written); past it `enqueue` answers 503. */
  maxPending: number;
  /** Events per insert statement at most (whole requests are never split). */
  maxBatch: number;
  /** Wait this long for more events before writing (0: write as soon as no write is running). */
  flushDelayMs: number;
  /** Inserts running at once (1 on PGlite, which has one connection). */
  concurrency: number;
  /** The database deadline of one request: a request whose events are not stored by then is answered 503. */
  waitDeadlineMs?: number | undefined;
  /** Called with the number of new rows after each successful write (metrics). */
  onStored?: (count: number) => void;
}

const RETRY_AFTER_SECONDS = 1;

interface Waiting {
  rows: EventInsertRow[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The bounded event queue, as group commit: each request awaits the write that stores its events, so a 202
 * means stored; requests arriving during a write share the next one.
 */
export class EventQueue {
  /** Writes started and events written since start (for tests and metrics). */
  readonly stats = { writes: 0, events: 0 };
  private waiting: Waiting[] = [];
  private queuedEvents = 0;
  private writingEvents = 0;
  private writes = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private hurried = false;
  private idle: (() => void)[] = [];

  constructor(
    /** Writes one batch (one statement); its failure fails or splits the batch (see `store`). */
    private readonly storeRows: StoreEventRows,
    private readonly options: EventQueueOptions,
    private readonly logger?: Logger,
  ) {}

  /** Events accepted but not yet stored. */
  get pending(): number {
    return this.queuedEvents + this.writingEvents;
  }

  /** Resolves once `rows` are stored (duplicates skipped); rejects with the store's failure. */
  enqueue(rows: EventInsertRow[]): Promise<void> {
    if (this.closed) {
      return Promise.reject(
        new AppError('SERVICE_UNAVAILABLE', 'The collector is shutting down; retry shortly', {
          headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
        }),
      );
    }
    // A request that alone exceeds the bound is still taken into an empty queue.
    if (this.pending > 0 && this.pending + rows.length > this.options.maxPending) {
      return Promise.reject(
        new AppError('SERVICE_UNAVAILABLE', 'Too many events are waiting to be stored; retry shortly', {
          headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
        }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const deadlineMs = this.options.waitDeadlineMs;
      if (deadlineMs === undefined) {
        this.waiting.push({ rows, resolve, reject });
      } else {
        const entry: Waiting = {
          rows,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        const timer = setTimeout(() => {
          const at = this.waiting.indexOf(entry);
          if (at !== -1) {
            // Never written: take it out (the events surely were not stored).
            this.waiting.splice(at, 1);
            this.queuedEvents -= rows.length;
          }
          reject(deadlineError(deadlineMs, at === -1));
        }, deadlineMs);
        this.waiting.push(entry);
      }
      this.queuedEvents += rows.length;
      this.schedule();
    });
  }

  /** Shutdown has begun: write at once from now on (no batching delay), still taking events. */
  hurry(): void {
    this.hurried = true;
    this.schedule(true);
  }

  /** Stops taking events and resolves when everything accepted is stored. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
  }

  /** Resolves when nothing is queued or being written (writes at once, ignoring the delay). */
  drain(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.idle.push(resolve);
      this.schedule(true);
    });
  }

  private schedule(now = false): void {
    if (this.waiting.length === 0 || this.writes >= this.options.concurrency) return;
    if (now || this.closed || this.hurried || this.idle.length > 0 || this.options.flushDelayMs <= 0) {
      this.startWrite();
    } else if (this.queuedEvents >= this.options.maxBatch) {
      this.startWrite();
    } else {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.startWrite();
      }, this.options.flushDelayMs);
    }
  }

  private startWrite(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.waiting.length === 0 || this.writes >= this.options.concurrency) return;
    const batch: Waiting[] = [];
    let size = 0;
    while (this.waiting.length > 0) {
      const next = this.waiting[0]!;
      if (batch.length > 0 && size + next.rows.length > this.options.maxBatch) break;
      this.waiting.shift();
      batch.push(next);
      size += next.rows.length;
    }
    this.queuedEvents -= size;
    this.writingEvents += size;
    this.writes += 1;
    this.stats.writes += 1;
    this.stats.events += size;
    void this.write(batch, size);
  }

  private async write(batch: Waiting[], size: number): Promise<void> {
    try {
      await this.store(batch);
    } finally {
      this.writingEvents -= size;
      this.writes -= 1;
      this.schedule();
      if (this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /**
   * Stores the requests of `batch` in one statement. A request refused for its values is answered 400 VALIDATION_ERROR
   * naming the problem, logged on one line; connection failures fail the whole batch.
   */
  private async store(batch: Waiting[]): Promise<void> {
    try {
      const rows = batch.length === 1 ? batch[0]!.rows : batch.flatMap((w) => w.rows);
      this.reportStored(await this.storeRows(rows));
      for (const w of batch) w.resolve();
    } catch (error) {
      if (batch.length > 1 && !isConnectionError(error)) {
        const half = Math.ceil(batch.length / 2);
        await this.store(batch.slice(0, half));
        await this.store(batch.slice(half));
        return;
      }
      const rejection = dataRejection(error);
      if (rejection) {
        // The client's values, not a failure of ours: one line, no stack.
        this.logger?.warn(
          { sqlstate: rejection.sqlstate, reason: rejection.reason, events: batch[0]!.rows.length },
          'storing events refused by the database: request answered 400',
        );
        const answer = new AppError('VALIDATION_ERROR', `Invalid request: events refused: ${rejection.message}`, {
          cause: error,
        });
        for (const w of batch) w.reject(answer);
        return;
      }
      this.logger?.error({ err: error, events: batch.reduce((n, w) => n + w.rows.length, 0) }, 'storing events failed');
      for (const w of batch) w.reject(error);
    }
  }

  private reportStored(stored: Map<string, number>): void {
    if (!this.options.onStored) return;
    let count = 0;
    for (const n of stored.values()) count += n;
    this.options.onStored(count);
  }
}
