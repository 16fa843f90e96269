import { type ConsumerMessages, type JsMsg, jetstream } from '@nats-io/jetstream';
import { deepTextProblem } from '@partner/shared-schemas';
import type { Database } from '../db/client.js';
import { type StatsSink, storeEvents } from '../features/events/ingest/store-events.js';
import type { TagLiveness } from '../features/tags/lifecycle/tag-liveness.js';
import { dataRejection, isConnectionError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import type { EventLog, LogMessage } from '../runtime/event-log.js';
import type { EventInsertRow } from '../runtime/event-queue.js';

export interface LogWriterOptions {
  /** Events per insert statement at most (a message is never split). */
  maxBatch: number;
  /** Messages the writer holds from the log at once (its pull buffer). */
  maxMessages: number;
  /** Backoff while the database does not answer: first and largest wait (ms). */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Called with the number of events of each committed write (the `stored` collector metric). */
  onStored?: (count: number) => void;
  /** Where the statistics take the events each write commits (features/stats/store.ts). */
  stats?: StatsSink | undefined;
  /** Called once per message terminated without being stored, with why. */
  onRejected?: (reason: string) => void;
}

/**
 * A writer: drains the log's durable pull consumer into PostgreSQL, acknowledging only after the commit, so a writer
 * killed mid-batch loses nothing (redelivered; ON CONFLICT DO NOTHING skips what was committed).
 */
export class LogWriter {
  /** Batches and events committed since start (tests, metrics). */
  readonly stats = { writes: 0, events: 0, messages: 0, retries: 0, rejected: 0, dropped: 0 };
  private readonly buffer: JsMsg[] = [];
  private messages: ConsumerMessages | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  constructor(
    private readonly db: Database,
    private readonly log: EventLog,
    private readonly tagLiveness: TagLiveness,
    private readonly options: LogWriterOptions,
    private readonly logger?: Logger,
  ) {}

  async start(): Promise<void> {
    const consumer = await jetstream(this.log.nc).consumers.get(this.log.names.stream, this.log.names.durable);
    this.messages = await consumer.consume({
      max_messages: this.options.maxMessages,
      // Pull requests live on the consumer's leader node; a dead leader is noticed only after two missed
      // heartbeats (half of `expires`), so a short `expires` bounds that stall. An idle re-pull costs a few bytes.
      expires: 5_000,
      callback: (msg) => {
        this.buffer.push(msg);
        this.wake?.();
      },
    });
    this.running = this.loop();
  }

  /** Stops pulling, finishes the batch being written; what is left in the buffer is redelivered later. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    // At most 2 s: with NATS away the consumer's close would wait for the server.
    await Promise.race([
      this.messages?.close().catch(() => {}),
      new Promise((resolve) => setTimeout(resolve, 2_000).unref()),
    ]);
    await this.running;
    // Unacknowledged messages go back to the log at once rather than after ack_wait.
    for (const msg of this.buffer.splice(0)) msg.nak();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      if (this.buffer.length === 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      const batch = this.take();
      await this.write(batch);
    }
  }

  /** The oldest buffered messages up to `maxBatch` events (at least one message). */
  private take(): { msgs: JsMsg[]; rows: EventInsertRow[] } {
    const msgs: JsMsg[] = [];
    const rows: EventInsertRow[] = [];
    while (this.buffer.length > 0) {
      const msg = this.buffer[0]!;
      let parsed: LogMessage;
      try {
        parsed = msg.json<LogMessage>();
      } catch (error) {
        // Nothing we published: keep it out of the way for good (term), and say so.
        this.logger?.warn({ seq: msg.seq, error: String(error) }, 'event log: unreadable message terminated');
        this.buffer.shift();
        this.reject(msg, 'unreadable');
        continue;
      }
      if (parsed.rows.some(holdsNul)) {
        // Published by a version that accepted U+0000 in data: stored, it would break every later
        // cast of the row to jsonb. Refused as the schemas now refuse it.
        this.logger?.warn({ seq: msg.seq }, 'event log: message with U+0000 in event data terminated');
        this.buffer.shift();
        this.reject(msg, 'text');
        continue;
      }
      if (msgs.length > 0 && rows.length + parsed.rows.length > this.options.maxBatch) break;
      this.buffer.shift();
      msgs.push(msg);
      for (const row of parsed.rows) rows.push(row);
    }
    return { msgs, rows };
  }

  private async write({ msgs, rows: given }: { msgs: JsMsg[]; rows: EventInsertRow[] }): Promise<void> {
    if (msgs.length === 0) return;
    let rows = given;
    const min = this.options.retryMinMs ?? 100;
    const max = this.options.retryMaxMs ?? 5_000;
    let wait = min;
    let lastProgress = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        // Events of a tag deleted since they were published (its merchant's data is being purged) are dropped.
        const tagIds = [...new Set(rows.map((r) => r.tagId))];
        const existing = await this.tagLiveness.existing(tagIds);
        const kept = existing.size === tagIds.length ? rows : rows.filter((r) => existing.has(r.tagId));
        this.stats.dropped += rows.length - kept.length;
        rows = kept;
        if (rows.length > 0) await storeEvents(this.db, rows, this.options.stats);
        await this.tagLiveness.eventsStored([...existing]);
        break;
      } catch (error) {
        if (!isConnectionError(error)) {
          if (msgs.length > 1) {
            // The database refused these rows (not: did not answer): some message is the cause. Write each half alone,
            // so the refused ones are found in a few statements and the others are stored, never held up with them.
            const half = Math.ceil(msgs.length / 2);
            const [first, second] = [msgs.slice(0, half), msgs.slice(half)];
            await this.write({ msgs: first, rows: first.flatMap((msg) => msg.json<LogMessage>().rows) });
            await this.write({ msgs: second, rows: second.flatMap((msg) => msg.json<LogMessage>().rows) });
            return;
          }
          const rejection = dataRejection(error);
          if (rejection) {
            // Its values: the same statement fails every time, so no retry. Set it aside at once,
            // one line naming its sequence (no stack: 6,000 of these a minute can come from one address).
            this.logger?.warn(
              {
                seq: msgs[0]?.seq,
                merchantId: rows[0]?.merchantId,
                sqlstate: rejection.sqlstate,
                reason: rejection.reason,
                events: rows.length,
              },
              `event log writer: message refused by the database (${rejection.message}), terminated`,
            );
            this.reject(msgs[0]!, rejection.reason);
            return;
          }
          if (attempt >= 4) {
            // A message PostgreSQL refuses every time would block the log for good: set it aside
            // (terminated, and logged with its events so it can be replayed by hand).
            this.logger?.error(
              { err: error, seq: msgs[0]?.seq, rows },
              'event log writer: message refused, terminated',
            );
            for (const msg of msgs) this.reject(msg, 'repeated_failure');
            return;
          }
        }
        this.stats.retries += 1;
        if (attempt === 0 || attempt % 20 === 0) {
          this.logger?.warn({ err: error, events: rows.length, attempt }, 'event log writer: write failed, retrying');
        }
        // Still ours: keep JetStream from redelivering the batch to another writer meanwhile.
        if (Date.now() - lastProgress > 2_000) {
          for (const msg of msgs) msg.working();
          lastProgress = Date.now();
        }
        if (this.stopped && attempt >= 2) {
          // Shutting down with the database away: hand the batch back to the log.
          for (const msg of msgs) msg.nak();
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, wait / 2 + Math.random() * (wait / 2)));
        wait = Math.min(max, wait * 2);
      }
    }
    for (const msg of msgs) msg.ack();
    this.stats.writes += 1;
    this.stats.events += rows.length;
    this.stats.messages += msgs.length;
    this.options.onStored?.(rows.length);
  }

  /** Terminates a message that will never be stored: JetStream never redelivers it. */
  private reject(msg: JsMsg, reason: string): void {
    // No reason on the wire: NATS servers before 2.10 ignore a `+TERM <reason>` (the message
    // would stay pending); the reason is in the log line and the metric.
    msg.term();
    this.stats.rejected += 1;
    this.options.onRejected?.(reason);
  }
}

/** True when a row's data JSON holds a U+0000 (its escape, not an escaped backslash followed by `u0000`). */
function holdsNul(row: EventInsertRow): boolean {
  if (!row.rawData.includes('\\u0000')) return false;
  try {
    return deepTextProblem(JSON.parse(row.rawData)) === 'nul';
  } catch {
    return false; // not JSON: nothing we published; the database stores it as text, as before
  }
}
