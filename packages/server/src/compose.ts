import os from 'node:os';
import path from 'node:path';
import type { AppDeps } from './context.js';
import { type Database, type DatabaseHandle, openDatabase, openReadReplica } from './db/client.js';
import { DEADLINE_MARGIN_MS } from './db/deadline.js';
import { StoreLockedError } from './db/lock.js';
import { primaryReads, type ReadDb, ReplicaReads } from './db/read-routing.js';
import { storeEvents } from './features/events/ingest/store-events.js';
import { loadCursorKey } from './features/events/read/cursor.js';
import { EventSubscription } from './features/events/stream/subscription.js';
import { authenticate } from './features/partners/authenticate.js';
import { type StatsEngine, StatsStore } from './features/stats/store.js';
import { TagLiveness } from './features/tags/lifecycle/tag-liveness.js';
import { tagStateConfigFromEnv } from './features/tags/lifecycle/tag-state.js';
import { createDayCountCompaction } from './jobs/day-count-compaction.js';
import { LogWriter } from './jobs/event-log-writer.js';
import { createEventPartitions } from './jobs/event-partitions.js';
import { createEventRetention } from './jobs/event-retention.js';
import { logWritersPart, pollLoopPart, tagMonitorPart, webhookWorkerPart } from './jobs/job-parts.js';
import { createMerchantPurge } from './jobs/merchant-purge.js';
import { createStatsNotices } from './jobs/stats-notices.js';
import { statsStorePart } from './jobs/stats-transfer.js';
import { createTagMonitor } from './jobs/tag-monitor.js';
import { createVisitorErasure } from './jobs/visitor-erasure.js';
import { createWebhookDeliveryWorker, type WebhookDeliveryWorker } from './jobs/webhook-delivery.js';
import { createWebhookRetention } from './jobs/webhook-retention.js';
import { type Env, withKnobs } from './kernel/env.js';
import { createLogger, type Logger } from './kernel/logger.js';
import { createMetrics, type Metrics } from './kernel/metrics.js';
import {
  databaseStartupError,
  embeddedStartupError,
  errorCode,
  maskUrl,
  StartupError,
  statsStartupError,
} from './kernel/startup-error.js';
import type { TestKnobs } from './kernel/test-knobs.js';
import { CollectorHostSet } from './runtime/collector/collector-hosts.js';
import { DailySalt } from './runtime/collector/daily-salt.js';
import { DeletedTags } from './runtime/collector/deleted-tags.js';
import { createDnsResolver, type DnsResolver } from './runtime/dns-resolver.js';
import { EventLog } from './runtime/event-log.js';
import { logRejectedCounter } from './runtime/event-log-metrics.js';
import { type EventInsertRow, EventQueue } from './runtime/event-queue.js';
import { HeldBytes } from './runtime/held-bytes.js';
import { IdempotencyStore } from './runtime/idempotency-store.js';
import { ApiKeys } from './runtime/keys/api-keys.js';
import { Lifecycle } from './runtime/lifecycle.js';
import { createRateLimits } from './runtime/rate-limits.js';
import {
  collectorHostWatchPart,
  databasePart,
  deletedTagsWatchPart,
  eventLogPart,
  eventQueuePart,
  keyWatchPart,
  rateLimitsPart,
  readReplicaPart,
  streamHubPart,
  visitorSaltPart,
} from './runtime/runtime-parts.js';
import { StreamCaps } from './runtime/stream-caps.js';
import { StreamHub } from './runtime/stream-hub.js';
import { WebhookHostResolver } from './runtime/webhook-host-resolver.js';

export interface ComposeOptions {
  logger?: Logger;
  dns?: DnsResolver;
  /** An already open database (tests share one; the app then never closes it); otherwise opened from the env. */
  database?: DatabaseHandle;
  /** The app's metrics registry; default a fresh one per app. */
  metrics?: Metrics;
  /** Where the statistics live; default from the env (statsEngineOf). */
  stats?: StatsEngine;
  /** Tests only: timings to shrink (kernel/test-knobs.ts), over the env's own (production) knobs. */
  knobs?: Partial<TestKnobs>;
}

/** An app built and not yet started: its dependencies and its parts (no listener yet). */
export interface ComposedApp {
  deps: AppDeps;
  database: DatabaseHandle;
  /** The parts in start order; `lifecycle.start()` starts them, `lifecycle.stop(graceMs)` stops them. */
  lifecycle: Lifecycle;
  /** The log's writers of this process (log mode, ROLE writer or all). */
  writers: LogWriter[];
  /** The webhook delivery worker (undefined with WEBHOOK_DELIVERY=off). */
  webhookWorker?: WebhookDeliveryWorker | undefined;
}

/** Opens the database of the env. */
export async function openDatabaseFromEnv(env: Env, owner = 'the server'): Promise<DatabaseHandle> {
  const url = env.DATABASE_URL;
  if (url) {
    return openDatabase({
      kind: 'postgres',
      url,
      maxConnections: env.DB_POOL_MAX,
      statementTimeoutMs: env.DB_STATEMENT_TIMEOUT,
      migrationTimeoutMs: env.DB_LONG_STATEMENT_TIMEOUT,
    }).catch((error: unknown) => {
      throw databaseStartupError(error, url);
    });
  }
  return openDatabase({ kind: 'pglite', dataDir: env.DATA_DIR, lockOwner: owner }).catch((error: unknown) => {
    if (error instanceof StoreLockedError && error.holder.pid !== undefined) {
      throw new StartupError(
        `The embedded database in DATA_DIR=${env.DATA_DIR} is locked by ${error.holder.owner ?? 'another process'} (pid ${error.holder.pid}): stop it, or set DATA_DIR or DATABASE_URL`,
        { cause: error },
      );
    }
    throw embeddedStartupError(error, env.DATA_DIR);
  });
}

/** Builds the app's dependencies and its parts from the env, nothing started, nothing listening. */
export async function composeApp(settings: Env, options: ComposeOptions = {}): Promise<ComposedApp> {
  const env = withKnobs(settings, options.knobs);
  const logger = options.logger ?? createLogger(env);
  const metrics = options.metrics ?? createMetrics();
  const database = options.database ?? (await openDatabaseFromEnv(env));
  const lifecycle = new Lifecycle({ logger, metrics });
  lifecycle.add(databasePart(database, options.database === undefined));
  try {
    const reads = await openReads(env, database, logger, metrics, lifecycle);
    const stats = await openStats(env, database, logger, lifecycle, options.stats);
    return await composeParts(env, { logger, metrics, database, reads, lifecycle, stats, dns: options.dns });
  } catch (error) {
    await lifecycle.stop(0);
    throw error;
  }
}

interface Base {
  logger: Logger;
  metrics: Metrics;
  database: DatabaseHandle;
  reads: ReadDb;
  lifecycle: Lifecycle;
  stats: StatsStore | undefined;
  dns: DnsResolver | undefined;
}

/** The background jobs that delete and compact stored data (docs/decisions/data-deletion.md). */
function addDataLifecycleParts(
  env: Env,
  {
    db,
    logger,
    metrics,
    stats,
    visitorSalt,
  }: {
    db: Database;
    logger: Base['logger'];
    metrics: Base['metrics'];
    stats: Base['stats'];
    visitorSalt: DailySalt;
  },
  lifecycle: Lifecycle,
) {
  // Deleted merchants' rows, in the background, once events accepted before the DELETE have committed.
  const graceMs = env.DB_STATEMENT_TIMEOUT + DEADLINE_MARGIN_MS;
  lifecycle.add(
    pollLoopPart('merchant-purge', createMerchantPurge({ db, stats, logger, metrics, graceMs, intervalMs: graceMs })),
  );
  // Visitor erasures; without `suppress`, log mode keeps dropping the visitor's events as long as the log may hold one.
  const holdMs = env.EVENT_LOG_URL ? env.EVENT_LOG_MAX_AGE_SECONDS * 1000 : 0;
  lifecycle.add(
    pollLoopPart(
      'visitor-erasure',
      createVisitorErasure({ db, stats, logger, metrics, graceMs, holdMs, intervalMs: graceMs }),
    ),
  );
  // The cookieless visitors' salt of a day that ended, gone within seconds of its end (docs/decisions/consent.md).
  lifecycle.add(visitorSaltPart(visitorSalt));
  // Events past their merchant's retention period, in the background (docs/decisions/data-deletion.md).
  const retention = { serverDays: env.EVENT_RETENTION_DAYS, everyMs: env.EVENT_RETENTION_INTERVAL };
  if (env.EVENT_RETENTION === 'on') {
    lifecycle.add(pollLoopPart('event-retention', createEventRetention({ db, stats, logger, metrics, ...retention })));
  }
  // The monthly partitions of events (migration 0028): created ahead; whole months emptied by retention.
  lifecycle.add(
    pollLoopPart(
      'event-partitions',
      createEventPartitions({
        db,
        logger,
        metrics,
        serverDays: retention.serverDays,
        emptyExpired: env.EVENT_RETENTION === 'on',
      }),
    ),
  );
  // The event list's day counts are delta rows (migration 0029): merged per key in the background.
  lifecycle.add(pollLoopPart('day-count-compaction', createDayCountCompaction({ db, logger })));
}

async function composeParts(env: Env, { logger, metrics, database, reads, lifecycle, stats, ...options }: Base) {
  const { db } = database;
  const tagState = tagStateConfigFromEnv(env);
  const tagLiveness = new TagLiveness(db, tagState);
  const keys = new ApiKeys(db);
  const collectorHosts = new CollectorHostSet();
  const deletedTags = new DeletedTags();
  deletedTags.subscribe((tagIds) => tagLiveness.forget(tagIds));
  const limits = await createRateLimits(env, logger, keys, (header, beforeLookup) =>
    authenticate(db, keys, header, beforeLookup),
  );
  lifecycle.add(
    collectorHostWatchPart(database, collectorHosts, logger),
    deletedTagsWatchPart(database, deletedTags, logger),
    keyWatchPart(database, keys, logger),
    rateLimitsPart(limits),
  );
  warnOfTrustProxy(env, logger);
  const dns = options.dns ?? createDnsResolver({ servers: env.DNS_SERVERS, timeoutMs: env.DNS_TIMEOUT_MS });
  if (env.TAG_MONITOR === 'on') {
    // Background DNS re-checks and health checks (jobs/tag-monitor.ts).
    lifecycle.add(tagMonitorPart(createTagMonitor({ db, dns, config: tagState, logger, metrics })));
  }
  const visitorSalt = new DailySalt(db, { logger });
  addDataLifecycleParts(env, { db, logger, metrics, stats, visitorSalt }, lifecycle);
  const eventLog = await openEventLog(env, logger);
  if (eventLog) lifecycle.add(eventLogPart(eventLog));
  // Webhooks: every process sends due deliveries (claims keep each in flight in one process).
  const webhookResolver = new WebhookHostResolver({
    servers: env.DNS_SERVERS,
    timeoutMs: env.DNS_TIMEOUT_MS,
    maxInFlight: env.WEBHOOK_DNS_CONCURRENCY,
  });
  let webhookWorker: WebhookDeliveryWorker | undefined;
  if (env.WEBHOOK_DELIVERY === 'on') {
    webhookWorker = createWebhookDeliveryWorker(database, env, logger, metrics, webhookResolver);
    const retention = createWebhookRetention({ db, retentionMs: env.WEBHOOK_RETENTION, logger, metrics });
    lifecycle.add(pollLoopPart('webhook-retention', retention), webhookWorkerPart(webhookWorker));
  }
  if (env.STATS_NOTICES === 'on' && stats) {
    // stats.digest and stats.spike, for the partners that turned them on (docs/decisions/digests.md).
    const { digests, spikes } = createStatsNotices({ deps: { db, stats, env }, logger, metrics });
    lifecycle.add(pollLoopPart('stats-digests', digests), pollLoopPart('stats-spikes', spikes));
  }
  const writers =
    eventLog && env.ROLE !== 'api'
      ? createLogWriters(env, database, eventLog, tagLiveness, metrics, logger, stats)
      : [];
  if (eventLog) lifecycle.add(logWritersPart(writers));
  // One budget for everything held for slow readers: streams' unsent events and exports' batches.
  const heldBytes = new HeldBytes(env.HELD_BYTES);
  // Each stream may hold STREAM_BUFFER_LIMIT events and STREAM_BUFFER_BYTES unsent, within HELD_BYTES.
  const streamBytes = { limit: env.STREAM_BUFFER_BYTES, held: heldBytes };
  const streams = new StreamHub<EventSubscription>({
    listen: database.listen,
    open: (merchantId, names, onEnd) =>
      new EventSubscription(db, merchantId, names, env.STREAM_BUFFER_LIMIT, onEnd, streamBytes),
    logger,
  });
  const eventQueue = createEventQueue(env, database, tagLiveness, metrics, logger, stats);
  lifecycle.add(streamHubPart(streams, heldBytes), eventQueuePart(eventQueue));
  const deps: AppDeps = {
    db,
    reads,
    stats,
    streams,
    env,
    logger,
    dns,
    eventQueue,
    tagLiveness,
    idempotency: new IdempotencyStore(db, logger),
    limits,
    metrics,
    streamCaps: new StreamCaps(env.STREAM_MAX_PER_PARTNER, env.STREAM_MAX_PER_PROCESS),
    exportCaps: new StreamCaps(env.EXPORT_MAX_PER_PARTNER, env.EXPORT_MAX_PER_PROCESS, {
      many: 'concurrent exports',
      one: 'export',
    }),
    heldBytes,
    eventLog,
    cursorKey: await loadCursorKey(db, env.CURSOR_SECRET),
    tagState,
    keys,
    collectorHosts,
    deletedTags,
    visitorSalt,
    webhookResolver,
  };
  return { deps, database, lifecycle, writers, webhookWorker };
}

/** The reads a replica may serve: routed by the replica's measured lag, or all on the primary without one. */
async function openReads(
  env: Env,
  database: DatabaseHandle,
  logger: Logger,
  metrics: Metrics,
  lifecycle: Lifecycle,
): Promise<ReadDb> {
  const url = env.DATABASE_READ_URL;
  if (!url) {
    lifecycle.add(readReplicaPart());
    return primaryReads(database.db);
  }
  const primaryUrl = env.DATABASE_URL;
  if (database.driver !== 'postgres' || !primaryUrl) {
    throw new StartupError('DATABASE_READ_URL needs DATABASE_URL: the embedded PGlite has no replica');
  }
  const replica = await openReadReplica(url, env.DB_POOL_MAX, env.DB_STATEMENT_TIMEOUT);
  // The lag check's own connections (a pool of one on each side): never queued behind the reads.
  const probes = await Promise.all([
    openReadReplica(primaryUrl, 1, env.DB_STATEMENT_TIMEOUT, 'primary-probe'),
    openReadReplica(url, 1, env.DB_STATEMENT_TIMEOUT, 'replica-probe'),
  ]);
  const reads = new ReplicaReads({
    primary: database.db,
    replica: replica.db,
    probes: { primary: probes[0].db, replica: probes[1].db },
    maxLagMs: env.DB_READ_MAX_LAG,
    checkIntervalMs: env.DB_READ_CHECK_INTERVAL,
    logger,
    metrics,
  });
  const close = async () => {
    await Promise.all([replica, ...probes].map((handle) => handle.close()));
  };
  lifecycle.add(readReplicaPart({ reads, close }));
  return reads;
}

function warnOfTrustProxy(env: Env, logger: Logger): void {
  if (env.TRUST_PROXY.kind !== 'all') return;
  // Kept for compatibility; every rate limit keys on an address the client can choose.
  logger.warn(
    "TRUST_PROXY=true is deprecated: it believes the left-most X-Forwarded-For hop, which the client writes; set a hop count (TRUST_PROXY=1) or the proxies' addresses/CIDRs",
  );
}

function createEventQueue(
  env: Env,
  database: DatabaseHandle,
  tagLiveness: TagLiveness,
  metrics: Metrics,
  logger: Logger,
  stats: StatsStore | undefined,
): EventQueue {
  const options = {
    maxPending: env.INGEST_QUEUE_MAX,
    maxBatch: env.INGEST_BATCH_MAX,
    flushDelayMs: env.knobs.ingestFlushDelayMs,
    // Nothing orders event commits and day counts are appended: writes of one merchant share no lock, so several may
    // run at once: one per core, leaving at least half the pool to the other routes.
    concurrency: database.driver === 'postgres' ? ingestWriters(env) : 1,
    // PGlite runs in process: no silent network to wait on.
    waitDeadlineMs: database.driver === 'postgres' ? env.DB_STATEMENT_TIMEOUT + DEADLINE_MARGIN_MS : undefined,
    onStored: (count: number) => metrics.ingest.events.inc({ outcome: 'stored' }, count),
  };
  // Each write stores its batch (and hands it to the statistics), then tells the tag lifecycle.
  const store = async (rows: EventInsertRow[]) => {
    const stored = await storeEvents(database.db, rows, stats);
    await tagLiveness.eventsStored([...stored.keys()]);
    return stored;
  };
  return new EventQueue(store, options, logger);
}

/** INGEST_WRITERS, or one per core and at most half the pool. */
export function ingestWriters(env: Pick<Env, 'INGEST_WRITERS' | 'DB_POOL_MAX'>): number {
  return env.INGEST_WRITERS ?? Math.max(1, Math.min(os.availableParallelism(), Math.floor(env.DB_POOL_MAX / 2)));
}

/** Log mode (EVENT_LOG_URL): the collectors publish to the durable log; writers drain it. */
async function openEventLog(env: Env, logger: Logger): Promise<EventLog | undefined> {
  const url = env.EVENT_LOG_URL;
  if (!url) return undefined;
  const options = {
    url,
    prefix: env.EVENT_LOG_PREFIX,
    maxBytes: env.EVENT_LOG_MAX_BYTES,
    maxAgeSeconds: env.EVENT_LOG_MAX_AGE_SECONDS,
    duplicateWindowSeconds: env.EVENT_LOG_DUPLICATE_WINDOW_SECONDS,
    replicas: env.EVENT_LOG_REPLICAS,
    publishTimeoutMs: env.EVENT_LOG_PUBLISH_TIMEOUT_MS,
    ackWaitSeconds: env.EVENT_LOG_ACK_WAIT_SECONDS,
    maxAckPending: env.EVENT_LOG_MAX_ACK_PENDING,
  };
  return EventLog.open(options, logger).catch((error: unknown) => {
    throw new StartupError(
      `Cannot reach NATS at EVENT_LOG_URL=${maskUrl(url)} (${errorCode(error)}): start NATS JetStream there or fix EVENT_LOG_URL`,
      { cause: error },
    );
  });
}

function createLogWriters(
  env: Env,
  database: DatabaseHandle,
  eventLog: EventLog,
  tagLiveness: TagLiveness,
  metrics: Metrics,
  logger: Logger,
  stats: StatsStore | undefined,
): LogWriter[] {
  const rejected = logRejectedCounter(metrics);
  const options = {
    maxBatch: env.INGEST_BATCH_MAX,
    maxMessages: Math.min(1_000, env.EVENT_LOG_MAX_ACK_PENDING),
    // Log mode: `stored` counts what the writers commit (accepted is counted at publish).
    onStored: (count: number) => metrics.ingest.events.inc({ outcome: 'stored' }, count),
    onRejected: (reason: string) => rejected.inc({ reason }),
    stats,
  };
  return Array.from(
    { length: env.EVENT_LOG_WRITERS },
    () => new LogWriter(database.db, eventLog, tagLiveness, options, logger),
  );
}

/** Where the statistics live: the ClickHouse server of CLICKHOUSE_URL, else chDB in this process. */
export function statsEngineOf(env: Env, database: DatabaseHandle): StatsEngine | undefined {
  if (env.STATS === 'off') return undefined;
  if (env.CLICKHOUSE_URL) return { kind: 'server', url: env.CLICKHOUSE_URL };
  if (env.ROLE !== 'all') return undefined;
  return { kind: 'chdb', path: path.join(env.DATA_DIR, 'clickhouse'), database: database.statsName };
}

async function openStats(
  env: Env,
  database: DatabaseHandle,
  logger: Logger,
  lifecycle: Lifecycle,
  engine = statsEngineOf(env, database),
): Promise<StatsStore | undefined> {
  if (!engine) {
    if (env.STATS === 'off') return undefined;
    logger.warn(
      `statistics are off in this process: ROLE=${env.ROLE} runs as one of several processes, which share statistics only through CLICKHOUSE_URL (events are stored as usual)`,
    );
    return undefined;
  }
  const stats = await StatsStore.open(engine, database.db, logger).catch((error: unknown) => {
    throw statsStartupError(error, engine);
  });
  lifecycle.add(statsStorePart(stats, logger));
  return stats;
}
