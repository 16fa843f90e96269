import { createHash } from 'node:crypto';
import {
  AckPolicy,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from '@nats-io/jetstream';
import { connect, type NatsConnection, nanos } from '@nats-io/transport-node';
import { AppError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import type { EventInsertRow } from './event-queue.js';

/** The log settings (from env.ts: EVENT_LOG_*). */
export interface EventLogOptions {
  /** `nats://host:port`, comma-separated for a cluster. */
  url: string;
  /** Names this deployment's stream and consumer (tests use a unique one per run). */
  prefix: string;
  /** Stream size limit: past it publishes are refused (503) rather than old events dropped. */
  maxBytes: number;
  /** Stream age limit (seconds): a backlog older than this is dropped; keep it well above any outage. */
  maxAgeSeconds: number;
  /** JetStream de-duplication window (seconds) for a message id (a re-sent request). */
  duplicateWindowSeconds: number;
  /** Replicas of the stream (1 on one server, 3 on a cluster of 3). */
  replicas: number;
  /** How long a publish waits for JetStream's acknowledgement (ms) before 503. */
  publishTimeoutMs: number;
  /** Writers: how long a delivered message may stay unacknowledged before redelivery (seconds). */
  ackWaitSeconds: number;
  /** Writers: messages delivered and not yet acknowledged, across every writer of the deployment. */
  maxAckPending: number;
}

/** One published message: one request's events, already keyed (ids fixed) and in array order. */
export interface LogMessage {
  rows: EventInsertRow[];
}

const LOG_RETRY_AFTER_SECONDS = 2;

/** Stream, subject and consumer names of a deployment. */
export function logNames(prefix: string): { stream: string; subjectRoot: string; durable: string } {
  const name = prefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return { stream: `${name}_EVENTS`, subjectRoot: `${name}.events`, durable: `${name}_writers` };
}

function unavailable(message: string, cause?: unknown): AppError {
  return new AppError('SERVICE_UNAVAILABLE', message, {
    cause,
    headers: { 'retry-after': String(LOG_RETRY_AFTER_SECONDS) },
  });
}

/**
 * The durable event log in front of PostgreSQL (NATS JetStream). `publish` answers once JetStream acknowledged the
 * message: a 202 is never given for events that are not durable.
 */
export class EventLog {
  readonly names: ReturnType<typeof logNames>;
  private connected = true;
  private outbox: Array<() => void> = [];
  private readonly sendOutbox = () => {
    const batch = this.outbox;
    this.outbox = [];
    for (const send of batch) send();
  };

  private constructor(
    readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly options: EventLogOptions,
    private readonly logger?: Logger,
  ) {
    this.names = logNames(options.prefix);
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') {
          this.connected = false;
          logger?.warn({ server: status.server }, 'event log: disconnected');
        } else if (status.type === 'reconnect') {
          this.connected = true;
          logger?.info({ server: status.server }, 'event log: reconnected');
        }
      }
    })().catch(() => {});
  }

  /** Connects, then creates or updates the stream and the writers' durable consumer. */
  static async open(options: EventLogOptions, logger?: Logger): Promise<EventLog> {
    const nc = await connect({
      servers: options.url.split(',').map((s) => s.trim()),
      name: `partner-tags ${options.prefix}`,
      timeout: 3_000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      reconnectJitter: 250,
      pingInterval: 10_000,
      // A failed publish is logged and answered 503 all the same.
      noAsyncTraces: true,
    });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5_000 });
      const log = new EventLog(nc, jetstream(nc, { timeout: options.publishTimeoutMs }), jsm, options, logger);
      await log.ensureStream();
      return log;
    } catch (error) {
      await nc.close().catch(() => {});
      throw error;
    }
  }

  private async ensureStream(): Promise<void> {
    const { stream, subjectRoot, durable } = this.names;
    const config: Partial<StreamConfig> & { name: string } = {
      name: stream,
      subjects: [`${subjectRoot}.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      discard: DiscardPolicy.New,
      max_bytes: this.options.maxBytes,
      max_age: nanos(this.options.maxAgeSeconds * 1000),
      duplicate_window: nanos(this.options.duplicateWindowSeconds * 1000),
      num_replicas: this.options.replicas,
      max_msgs: -1,
      max_msg_size: -1,
    };
    const exists = await this.jsm.streams.info(stream).then(
      () => true,
      () => false,
    );
    if (exists) await this.jsm.streams.update(stream, config);
    else await this.jsm.streams.add(config);
    const consumer = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(this.options.ackWaitSeconds * 1000),
      max_ack_pending: this.options.maxAckPending,
      max_deliver: -1,
    };
    const hasConsumer = await this.jsm.consumers.info(stream, durable).then(
      () => true,
      () => false,
    );
    if (hasConsumer) await this.jsm.consumers.update(stream, durable, consumer);
    else await this.jsm.consumers.add(stream, consumer);
  }

  /** True while the connection to NATS is up. */
  get isConnected(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  /** Publishes one request's events and resolves once JetStream stored them. */
  async publish(merchantId: string, rows: EventInsertRow[]): Promise<void> {
    if (!this.isConnected) throw unavailable('The event log is unreachable; retry shortly');
    const digest = createHash('sha256').update(merchantId);
    for (const row of rows) digest.update('\u0000').update(row.id);
    const payload: LogMessage = { rows };
    const subject = `${this.names.subjectRoot}.${merchantId}`;
    const data = JSON.stringify(payload);
    const options = { msgID: digest.digest('base64url'), timeout: this.options.publishTimeoutMs };
    try {
      await new Promise<void>((resolve, reject) => {
        this.outbox.push(() => {
          this.js.publish(subject, data, options).then(() => resolve(), reject);
        });
        if (this.outbox.length === 1) setImmediate(this.sendOutbox);
      });
    } catch (error) {
      this.logger?.warn({ err: error }, 'event log: publish failed');
      throw unavailable('The event log did not accept the events; retry shortly', error);
    }
  }

  /** True when the stream answers (for /readyz), within `ms`. */
  async ping(ms: number): Promise<boolean> {
    if (!this.isConnected) return false;
    try {
      const info = await Promise.race([
        this.jsm.streams.info(this.names.stream),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref()),
      ]);
      return info.config.name === this.names.stream;
    } catch {
      return false;
    }
  }

  /** The writers' consumer, for GET /metrics. Rejects after `ms` (NATS away or slow). */
  async consumerLag(ms: number): Promise<{ pending: number; ackPending: number }> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const info = await Promise.race([
        this.jsm.consumers.info(this.names.stream, this.names.durable),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no consumer info within ${ms} ms`)), ms);
        }),
      ]);
      return { pending: info.num_pending, ackPending: info.num_ack_pending };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Messages in the stream not yet drained (for metrics and tests). */
  async backlog(): Promise<number> {
    const info = await this.jsm.streams.info(this.names.stream);
    return info.state.messages;
  }

  /** Drains the connection (at most 2 s: NATS may be the part that is away), then closes it. */
  async close(): Promise<void> {
    const drained = this.nc.drain().catch(() => {});
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    if (!this.nc.isClosed()) await this.nc.close().catch(() => {});
  }
}

/** Deletes a deployment's stream (and so its consumer): for tests and benchmarks that made their own. */
export async function deleteLogStream(url: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: url.split(',').map((s) => s.trim()), timeout: 3_000 });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(logNames(prefix).stream).catch(() => false);
  } finally {
    await nc.close();
  }
}
