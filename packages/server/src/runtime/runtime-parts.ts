import type { DatabaseHandle } from '../db/client.js';
import type { ReplicaReads } from '../db/read-routing.js';
import type { Logger } from '../kernel/logger.js';
import { type CollectorHostSet, watchCollectorHosts } from './collector/collector-hosts.js';
import type { DailySalt } from './collector/daily-salt.js';
import { type DeletedTags, watchDeletedTags } from './collector/deleted-tags.js';
import type { EventLog } from './event-log.js';
import { registerEventLogMetrics } from './event-log-metrics.js';
import type { EventQueue } from './event-queue.js';
import type { HeldBytes } from './held-bytes.js';
import type { ApiKeys } from './keys/api-keys.js';
import type { Part } from './lifecycle.js';
import type { RateLimits } from './rate-limits.js';
import type { StreamHub } from './stream-hub.js';

// The runtime's long-lived objects as lifecycle parts (runtime/lifecycle.ts), with the metrics each owns.

/** The database; closed last, and only by the app that opened it (`owned`). */
export function databasePart(database: DatabaseHandle, owned: boolean): Part {
  return {
    name: 'database',
    stop: owned ? { release: () => database.close() } : {},
    metrics(metrics) {
      if (!database.poolStats) return;
      const pool = database.poolStats.bind(database);
      metrics.gaugeOf('partner_tags_db_pool_in_use', 'PostgreSQL pool connections running a query', () => pool().busy);
      metrics.gaugeOf('partner_tags_db_pool_idle', 'PostgreSQL pool connections open and idle', () => pool().idle);
      metrics.gaugeOf(
        'partner_tags_db_pool_waiting',
        'Queries waiting for a free pool connection',
        () => pool().waiting,
      );
    },
  };
}

/** The read replica: its lag measured in the background and its pool. Without a replica the part does nothing. */
export function readReplicaPart(replica?: { reads: ReplicaReads; close(): Promise<void> }): Part {
  if (!replica) return { name: 'read-replica', stop: {} };
  return {
    name: 'read-replica',
    start: () => replica.reads.start(),
    stop: {
      release: async () => {
        await replica.reads.stop();
        await replica.close();
      },
    },
    metrics: (metrics) => replica.reads.registerMetrics(metrics),
  };
}

/** Collector hosts in memory, kept by NOTIFY: a random Host header costs no database query. */
export function collectorHostWatchPart(database: DatabaseHandle, hosts: CollectorHostSet, logger: Logger): Part {
  let unwatch: (() => Promise<void>) | undefined;
  return {
    name: 'collector-host-watch',
    async start() {
      unwatch = await watchCollectorHosts(database, hosts, logger);
    },
    stop: { release: () => unwatch?.() },
  };
}

/** Deleted tags leave every process's tag caches by NOTIFY: a deleted tag stops collecting at once. */
export function deletedTagsWatchPart(database: DatabaseHandle, deleted: DeletedTags, logger: Logger): Part {
  let unwatch: (() => Promise<void>) | undefined;
  return {
    name: 'deleted-tags-watch',
    async start() {
      unwatch = await watchDeletedTags(database, deleted, logger);
    },
    stop: { release: () => unwatch?.() },
  };
}

/** Verified API keys are cached while this LISTEN runs: any key or partner change empties the cache. */
export function keyWatchPart(database: DatabaseHandle, keys: ApiKeys, logger: Logger): Part {
  let unwatch: (() => Promise<void>) | undefined;
  return {
    name: 'key-watch',
    async start() {
      unwatch = await keys.listen(database, logger);
    },
    stop: { release: () => unwatch?.() },
  };
}

/** The cookieless visitors' daily salt: an ended day's is deleted within seconds of its end, traffic or not. */
export function visitorSaltPart(salt: DailySalt): Part {
  return { name: 'visitor-salt', start: () => salt.start(), stop: { release: () => salt.stop() } };
}

export function rateLimitsPart(limits: RateLimits): Part {
  return { name: 'rate-limits', stop: { release: () => limits.close() } };
}

/** The durable log's connection; closed after the writers that read it. */
export function eventLogPart(eventLog: EventLog): Part {
  return {
    name: 'event-log',
    stop: { release: () => eventLog.close() },
    metrics: (metrics) => registerEventLogMetrics(metrics, eventLog),
  };
}

/** Open event streams end before the listeners drain, or draining would wait for them until the grace period. */
export function streamHubPart(streams: StreamHub, heldBytes: HeldBytes): Part {
  return {
    name: 'stream-hub',
    stop: { 'close-streams': () => streams.close() },
    metrics(metrics) {
      metrics.gaugeOf(
        'partner_tags_event_streams_open',
        'Open event streams (REST SSE and tRPC subscriptions)',
        () => streams.size,
      );
      // The budget streams share with exports.
      metrics.gaugeOf(
        'partner_tags_held_bytes',
        'Bytes held for slow readers (unsent stream events, export batches not yet written out)',
        () => heldBytes.held,
      );
    },
  };
}

/** The event queue: writes at once from the first phase. */
export function eventQueuePart(eventQueue: EventQueue): Part {
  return {
    name: 'event-queue',
    stop: { 'stop-accepting': () => eventQueue.hurry(), flush: () => eventQueue.close() },
    metrics: (metrics) =>
      metrics.gaugeOf(
        'partner_tags_ingest_queue_depth',
        'Events accepted and not yet stored',
        () => eventQueue.pending,
      ),
  };
}
