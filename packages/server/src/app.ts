import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { AppDeps } from './context.js';
import { type DatabaseHandle, openDatabase } from './db/client.js';
import { DEADLINE_MARGIN_MS } from './db/deadline.js';
import { StoreLockedError } from './db/lock.js';
import { loadCursorKey } from './features/events/read/cursor.js';
import { TagLiveness } from './features/tags/lifecycle/tag-liveness.js';
import { tagStateConfigFromEnv } from './features/tags/lifecycle/tag-state.js';
import { LogWriter } from './jobs/event-log-writer.js';
import { createTagMonitor } from './jobs/tag-monitor.js';
import { createWebhookDeliveryWorker, type WebhookDeliveryWorker } from './jobs/webhook-delivery.js';
import { createWebhookRetention } from './jobs/webhook-retention.js';
import type { Env } from './kernel/env.js';
import { AppError, toAppError } from './kernel/errors.js';
import { createLogger, type Logger } from './kernel/logger.js';
import { createMetrics, type Metrics } from './kernel/metrics.js';
import {
  databaseStartupError,
  embeddedStartupError,
  errorCode,
  listenError,
  maskUrl,
  StartupError,
} from './kernel/startup-error.js';
import { CollectorHostSet, watchCollectorHosts } from './runtime/collector/collector-hosts.js';
import { createDnsResolver, type DnsResolver } from './runtime/dns-resolver.js';
import { EventLog } from './runtime/event-log.js';
import { EventQueue } from './runtime/event-queue.js';
import { HeldBytes } from './runtime/held-bytes.js';
import { IdempotencyStore } from './runtime/idempotency-store.js';
import { ApiKeys } from './runtime/keys/api-keys.js';
import { createRateLimits } from './runtime/rate-limits.js';
import { StreamCaps } from './runtime/stream-caps.js';
import { StreamHub } from './runtime/stream-hub.js';
import { WebhookHostResolver } from './runtime/webhook-host-resolver.js';
import { answerClientError } from './transport/http/client-error.js';
import { handleMetrics, METRICS_PATH } from './transport/http/metrics-endpoint.js';
import { MAX_HEADER_BYTES } from './transport/http/request-path.js';
import { sendError } from './transport/http/respond.js';
import { createDrainState, createRequestListener, startDrain } from './transport/http/server.js';

export interface RunningApp {
  server: http.Server;
  /** The COLLECTOR_PORT listener, when set. */
  collectorServer?: http.Server | undefined;
  /** The METRICS_PORT listener, when set. */
  metricsServer?: http.Server | undefined;
  url: string;
  deps: AppDeps;
  database: DatabaseHandle;
  /** The log's writers running in this process (log mode, ROLE writer or all). */
  writers: LogWriter[];
  /** The webhook delivery worker (undefined with WEBHOOK_DELIVERY=off). */
  webhookWorker?: WebhookDeliveryWorker | undefined;
  /** Stops accepting, finishes in-flight requests (at most `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  dns?: DnsResolver;
  /** An already open database (tests share one); otherwise opened from the env. */
  database?: DatabaseHandle;
  /** The app's metrics registry; default a fresh one per app. */
  metrics?: Metrics;
}

/**
 * Opens the database of the env. A failure is a StartupError naming the setting to fix (the URL's
 * password masked, the error code; for the embedded store the data dir and who holds its lock).
 */
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

/**
 * Stops accepting and resolves once every connection has ended. Unlike `server.close()` (which in
 * Node 20 closes idle keep-alive sockets at once, so a request a client is sending on one meets a
 * reset), idle sockets stay open for the keep-alive timeout: a request arriving on one is answered
 * 503 with `Connection: close` (DrainState), and clients drop idle sockets themselves before that
 * timeout (Node's `Keep-Alive: timeout=5` hint). Then idle sockets are closed every 50 ms; whatever
 * is still open after `graceMs` is cut.
 */
function drainServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    let idle: NodeJS.Timeout | undefined;
    const linger = setTimeout(
      () => {
        server.closeIdleConnections();
        idle = setInterval(() => server.closeIdleConnections(), 50);
      },
      Math.min(server.keepAliveTimeout, graceMs),
    );
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    net.Server.prototype.close.call(server, () => {
      clearTimeout(linger);
      clearInterval(idle);
      clearTimeout(force);
      resolve();
    });
  });
}

/**
 * An HTTP listener with the slow-client protection every port gets: a client has
 * HTTP_HEADERS_TIMEOUT_MS to send its headers and HTTP_REQUEST_TIMEOUT_MS for the whole request
 * (checked every second, not Node's default 30 s), then it is answered 408 `{ message, code }`
 * through the error table (`answerClientError`) and cut off.
 */
function createListener(env: Env): http.Server {
  const server = http.createServer({
    connectionsCheckingInterval: Math.min(1_000, env.HTTP_HEADERS_TIMEOUT_MS),
    maxHeaderSize: MAX_HEADER_BYTES,
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = env.HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = Math.max(env.HTTP_REQUEST_TIMEOUT_MS, env.HTTP_HEADERS_TIMEOUT_MS);
  server.on('clientError', answerClientError);
  return server;
}

/**
 * Listens on `port`; a port in use or not allowed fails with a StartupError naming the setting
 * (`PORT 3000 is in use: stop the other process or set PORT`).
 */
function listen(server: http.Server, port: number, host: string, setting: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host, setting));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

export async function startApp(env: Env, options: StartOptions = {}): Promise<RunningApp> {
  const logger = options.logger ?? createLogger(env);
  const metrics = options.metrics ?? createMetrics();
  const database = options.database ?? (await openDatabaseFromEnv(env));
  const dns = options.dns ?? createDnsResolver({ servers: env.DNS_SERVERS, timeoutMs: env.DNS_TIMEOUT_MS });
  // Target host, monitor schedule and the webhook outbox of the tag state changes (features/tags/lifecycle/tag-state.ts).
  const tagState = tagStateConfigFromEnv(env);
  const tagLiveness = new TagLiveness(database.db, tagState);
  const eventQueue = new EventQueue(
    database.db,
    {
      maxPending: env.INGEST_QUEUE_MAX,
      maxBatch: env.INGEST_BATCH_MAX,
      flushDelayMs: env.INGEST_FLUSH_DELAY_MS,
      // One write at a time: event inserts commit one after another anyway (the stream's advisory
      // lock), and a single writer gathers the largest batches (measured).
      concurrency: 1,
      // PGlite runs in process: no silent network to wait on.
      waitDeadlineMs: database.driver === 'postgres' ? env.DB_STATEMENT_TIMEOUT + DEADLINE_MARGIN_MS : undefined,
      onStored: (count) => metrics.ingest.events.inc({ outcome: 'stored' }, count),
    },
    tagLiveness,
    logger,
  );
  const keys = new ApiKeys(database.db);
  const collectorHosts = new CollectorHostSet();
  const limits = await createRateLimits(env, logger, keys);
  if (env.TRUST_PROXY.kind === 'all') {
    // Kept for compatibility; every rate limit keys on an address the client can choose.
    logger.warn(
      "TRUST_PROXY=true is deprecated: it believes the left-most X-Forwarded-For hop, which the client writes; set a hop count (TRUST_PROXY=1) or the proxies' addresses/CIDRs",
    );
  }
  // One budget for everything held for slow readers: streams' unsent events and exports' batches.
  const heldBytes = new HeldBytes(env.HELD_BYTES);
  const streams = new StreamHub({
    db: database.db,
    listen: database.listen,
    bufferLimit: env.STREAM_BUFFER_LIMIT,
    bytes: { limit: env.STREAM_BUFFER_BYTES, held: heldBytes },
    logger,
  });
  if (database.poolStats) {
    const pool = database.poolStats.bind(database);
    metrics.gaugeOf('partner_tags_db_pool_in_use', 'PostgreSQL pool connections running a query', () => pool().busy);
    metrics.gaugeOf('partner_tags_db_pool_idle', 'PostgreSQL pool connections open and idle', () => pool().idle);
    metrics.gaugeOf('partner_tags_db_pool_waiting', 'Queries waiting for a free pool connection', () => pool().waiting);
  }
  metrics.gaugeOf('partner_tags_ingest_queue_depth', 'Events accepted and not yet stored', () => eventQueue.pending);
  metrics.gaugeOf(
    'partner_tags_event_streams_open',
    'Open event streams (REST SSE and tRPC subscriptions)',
    () => streams.size,
  );
  metrics.gaugeOf(
    'partner_tags_held_bytes',
    'Bytes held for slow readers (unsent stream events, export batches not yet written out)',
    () => heldBytes.held,
  );
  // Log mode: the collectors publish to the durable log; writers (ROLE writer or all) drain it.
  const logUrl = env.EVENT_LOG_URL;
  const eventLog = logUrl
    ? await EventLog.open(
        {
          url: logUrl,
          prefix: env.EVENT_LOG_PREFIX,
          maxBytes: env.EVENT_LOG_MAX_BYTES,
          maxAgeSeconds: env.EVENT_LOG_MAX_AGE_SECONDS,
          duplicateWindowSeconds: env.EVENT_LOG_DUPLICATE_WINDOW_SECONDS,
          replicas: env.EVENT_LOG_REPLICAS,
          publishTimeoutMs: env.EVENT_LOG_PUBLISH_TIMEOUT_MS,
          ackWaitSeconds: env.EVENT_LOG_ACK_WAIT_SECONDS,
          maxAckPending: env.EVENT_LOG_MAX_ACK_PENDING,
        },
        logger,
      ).catch((error: unknown) => {
        throw new StartupError(
          `Cannot reach NATS at EVENT_LOG_URL=${maskUrl(logUrl)} (${errorCode(error)}): start NATS JetStream there or fix EVENT_LOG_URL`,
          { cause: error },
        );
      })
    : undefined;
  // Messages the writers set aside without storing them, by why (errors.ts DataRejection reasons,
  // unreadable, repeated_failure): each is terminated at once, never retried.
  const logRejected = eventLog
    ? metrics.counter({
        name: 'partner_tags_event_log_rejected_total',
        help: 'Log mode: messages terminated without being stored, by reason (the database refused their values, unreadable, repeated failure)',
        labelNames: ['reason'] as const,
      })
    : undefined;
  const writers =
    eventLog && env.ROLE !== 'api'
      ? Array.from(
          { length: env.EVENT_LOG_WRITERS },
          () =>
            new LogWriter(
              database.db,
              eventLog,
              tagLiveness,
              {
                maxBatch: env.INGEST_BATCH_MAX,
                maxMessages: Math.min(1_000, env.EVENT_LOG_MAX_ACK_PENDING),
                // Log mode: `stored` counts what the writers commit (accepted is counted at publish).
                onStored: (count) => metrics.ingest.events.inc({ outcome: 'stored' }, count),
                onRejected: (reason) => logRejected?.inc({ reason }),
              },
              logger,
            ),
        )
      : [];
  for (const writer of writers) await writer.start();
  if (eventLog) {
    metrics.gaugeOf('partner_tags_event_log_connected', 'Log mode: 1 while the connection to NATS is up', () =>
      eventLog.isConnected ? 1 : 0,
    );
    metrics.gaugeOf(
      'partner_tags_event_log_writer_events',
      "Events this process's log writers committed since start",
      () => writers.reduce((sum, w) => sum + w.stats.events, 0),
    );
    metrics.gaugeOf(
      'partner_tags_event_log_writer_retries',
      "Failed writes this process's log writers retried since start (the database did not answer)",
      () => writers.reduce((sum, w) => sum + w.stats.retries, 0),
    );
    // The log lag, sampled from NATS at scrape time with a deadline (a scrape never hangs on NATS).
    // prom-client starts every metric's collect of a scrape at once: the three below share one sample.
    let lagSample: Promise<{ pending: number; ackPending: number } | null> | undefined;
    const sampleLag = () => {
      lagSample ??= eventLog.consumerLag(1_000).then(
        (sample) => sample,
        () => null,
      );
      const current = lagSample;
      // Every metric's collect of one scrape starts in the same tick: they all got this sample.
      void current.then(() => {
        if (lagSample === current) lagSample = undefined;
      });
      return current;
    };
    metrics.gauge({
      name: 'partner_tags_event_log_pending_messages',
      help: 'Log mode: messages in the log not yet written to the database, by state: pending (not yet delivered to a writer), ack_pending (delivered, not yet acknowledged)',
      labelNames: ['state'] as const,
      async collect() {
        const sample = await sampleLag();
        if (!sample) return; // keeps its last value; the two below say why
        this.set({ state: 'pending' }, sample.pending);
        this.set({ state: 'ack_pending' }, sample.ackPending);
      },
    });
    metrics.gauge({
      name: 'partner_tags_event_log_lag_sampled',
      help: 'Log mode: 1 when this scrape read the log lag from NATS within 1 s, 0 when it could not',
      async collect() {
        this.set((await sampleLag()) ? 1 : 0);
      },
    });
    let lagErrors = 0;
    const failedSamples = new WeakSet<object>();
    metrics.counter({
      name: 'partner_tags_event_log_lag_scrape_errors_total',
      help: 'Log mode: scrapes that could not read the log lag from NATS within 1 s',
      async collect() {
        const current = sampleLag();
        if ((await current) === null && !failedSamples.has(current)) {
          failedSamples.add(current);
          lagErrors++;
        }
        this.reset();
        this.inc(lagErrors);
      },
    });
  }
  const cursorKey = await loadCursorKey(database.db, env.CURSOR_SECRET);
  // Webhooks: every process sends due deliveries (claims keep each in flight in one process).
  const webhookResolver = new WebhookHostResolver({
    servers: env.DNS_SERVERS,
    timeoutMs: env.DNS_TIMEOUT_MS,
    maxInFlight: env.WEBHOOK_DNS_CONCURRENCY,
  });
  const webhookWorker =
    env.WEBHOOK_DELIVERY === 'on'
      ? createWebhookDeliveryWorker(database, env, logger, metrics, webhookResolver)
      : undefined;
  await webhookWorker?.start();
  // Webhook retention (jobs/webhook-retention.ts): where deliveries are sent, rows past WEBHOOK_RETENTION are deleted.
  const webhookRetention =
    env.WEBHOOK_DELIVERY === 'on'
      ? createWebhookRetention({ db: database.db, retentionMs: env.WEBHOOK_RETENTION, logger, metrics })
      : undefined;
  webhookRetention?.start();
  const deps: AppDeps = {
    db: database.db,
    streams,
    env,
    logger,
    dns,
    eventQueue,
    tagLiveness,
    idempotency: new IdempotencyStore(database.db, logger),
    limits,
    metrics,
    streamCaps: new StreamCaps(env.STREAM_MAX_PER_PARTNER, env.STREAM_MAX_PER_PROCESS),
    exportCaps: new StreamCaps(env.EXPORT_MAX_PER_PARTNER, env.EXPORT_MAX_PER_PROCESS, {
      many: 'concurrent exports',
      one: 'export',
    }),
    heldBytes,
    eventLog,
    cursorKey,
    tagState,
    keys,
    collectorHosts,
    webhookResolver,
  };
  // Verified API keys are cached while this LISTEN runs: any key or partner change empties the cache.
  const stopWatchingKeys = await keys.listen(database, logger);
  // Collector hosts in memory, kept by NOTIFY: a random Host header costs no database query.
  const stopWatchingHosts = await watchCollectorHosts(database, collectorHosts, logger);

  const server = createListener(env);
  await listen(server, env.PORT, env.HOST, 'PORT');
  const address = server.address() as AddressInfo;
  const host = env.HOST === '0.0.0.0' || env.HOST === '::' ? 'localhost' : env.HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  const drain = createDrainState();
  server.on('request', createRequestListener(deps, database, env.PUBLIC_BASE_URL, { drain }));
  // COLLECTOR_PORT: a second listener that answers collector hosts only (the tag script, POST /e).
  let collectorServer: http.Server | undefined;
  if (env.COLLECTOR_PORT !== undefined) {
    // The same slow-client protection as the main port (headers and request deadlines, JSON 408).
    const collector = createListener(env);
    collector.on('request', createRequestListener(deps, database, url, { collectorOnly: true, drain }));
    await listen(collector, env.COLLECTOR_PORT, env.HOST, 'COLLECTOR_PORT');
    collectorServer = collector;
  }
  // The tag monitor (jobs/tag-monitor.ts): background DNS re-checks and health checks; TAG_MONITOR=off skips it.
  const tagMonitor =
    env.TAG_MONITOR === 'on'
      ? createTagMonitor({ db: database.db, dns, config: tagState, logger, metrics })
      : undefined;
  tagMonitor?.start();

  // METRICS_PORT: GET /metrics without a token, nothing else (keep this port private).
  let metricsServer: http.Server | undefined;
  if (env.METRICS_PORT !== undefined) {
    const listener = createListener(env);
    listener.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const pathname = (req.url ?? '/').split('?')[0];
      const answer = pathname === METRICS_PATH ? handleMetrics(deps, req, res, { open: true }) : Promise.resolve(false);
      void answer.then(
        (answered) => answered || sendError(res, new AppError('NOT_FOUND', 'Not found')),
        (error: unknown) => sendError(res, toAppError(error)),
      );
    });
    await listen(listener, env.METRICS_PORT, env.HOST, 'METRICS_PORT');
    metricsServer = listener;
  }

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000) => {
    closing ??= (async () => {
      // Stop listening first, in this same tick, before any response tells a client to reconnect:
      // a connection still in the kernel's accept queue when a listener closes is reset, and the
      // `Connection: close` answers below make clients reconnect at once. Closed now, new
      // connections are refused (the client knows nothing was sent) and the queue is empty.
      const listenersDrained = Promise.all([
        drainServer(server, graceMs),
        collectorServer && drainServer(collectorServer, graceMs),
        metricsServer && drainServer(metricsServer, graceMs),
      ]);
      // From now on every response closes its connection and requests on open sockets are answered 503.
      startDrain(drain);
      // From now on the ingestion queue writes at once (no batching delay).
      eventQueue.hurry();
      // No new background check starts; the one running ends by its deadline (its claim expires if cut).
      const monitorStopped = tagMonitor?.stop();
      // Open event streams end first (clients resume elsewhere with their last id); otherwise
      // server.close() would wait for them until the grace period.
      await streams.close();
      await listenersDrained;
      // Every event answered 202 is stored: write what the ingestion queue holds before the database closes.
      await eventQueue.close();
      // Writers finish the batch they are writing; what they hold unwritten goes back to the log.
      await Promise.all(writers.map((writer) => writer.stop()));
      // Requests in flight end by their deadline; claimed but unsent deliveries are given back.
      await webhookWorker?.stop();
      await webhookRetention?.stop();
      await eventLog?.close();
      await monitorStopped;
      await limits.close();
      await stopWatchingKeys().catch(() => {});
      await stopWatchingHosts().catch(() => {});
      if (!options.database) await database.close();
    })();
    return closing;
  };
  return { server, collectorServer, metricsServer, url, deps, database, writers, webhookWorker, close };
}
