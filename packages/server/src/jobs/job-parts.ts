import type { Metrics } from '../kernel/metrics.js';
import { registerLogWriterMetrics } from '../runtime/event-log-metrics.js';
import type { Part } from '../runtime/lifecycle.js';
import type { LogWriter } from './event-log-writer.js';
import type { PollLoop } from './poll-loop.js';
import type { WebhookDeliveryWorker } from './webhook-delivery.js';

// The background jobs as lifecycle parts (runtime/lifecycle.ts).

/**
 * The tag monitor: no new check is claimed from the first phase on; the one running ends by its
 * deadline (its claim expires if cut) while the rest shuts down, and is waited for on release.
 */
export function tagMonitorPart(monitor: PollLoop): Part {
  let stopped: Promise<void> | undefined;
  return {
    name: 'tag-monitor',
    start: () => monitor.start(),
    stop: {
      'stop-accepting': () => {
        stopped = monitor.stop();
      },
      release: () => stopped,
    },
  };
}

/** The statistics' fold: the pass running ends; what is left pending waits for the next process or read. */
export function statsFoldPart(fold: PollLoop): Part {
  return { name: 'stats-fold', start: () => fold.start(), stop: { release: () => fold.stop() } };
}

/** Webhook retention: deletes delivered rows past WEBHOOK_RETENTION. */
export function webhookRetentionPart(retention: PollLoop): Part {
  return { name: 'webhook-retention', start: () => retention.start(), stop: { release: () => retention.stop() } };
}

/** The purge of deleted merchants: a run cut by shutdown gives its merchant back when its lease runs out. */
export function merchantPurgePart(purge: PollLoop): Part {
  return { name: 'merchant-purge', start: () => purge.start(), stop: { release: () => purge.stop() } };
}

/** Event retention: a run cut by shutdown gives its merchant back when its lease runs out. */
export function eventRetentionPart(retention: PollLoop): Part {
  return { name: 'event-retention', start: () => retention.start(), stop: { release: () => retention.stop() } };
}

/** The events table's monthly partitions: created ahead, and emptied once expired; a run cut by shutdown rolls back. */
export function eventPartitionsPart(partitions: PollLoop): Part {
  return { name: 'event-partitions', start: () => partitions.start(), stop: { release: () => partitions.stop() } };
}

/** The day counts' compaction: the pass running ends (its transaction commits or rolls back whole). */
export function dayCountCompactionPart(compaction: PollLoop): Part {
  return { name: 'day-count-compaction', start: () => compaction.start(), stop: { release: () => compaction.stop() } };
}

/** Visitor erasures: a run cut by shutdown gives its erasure back when its lease runs out. */
export function visitorErasurePart(erasure: PollLoop): Part {
  return { name: 'visitor-erasure', start: () => erasure.start(), stop: { release: () => erasure.stop() } };
}

/** Requests in flight end by their deadline; claimed but unsent deliveries are given back. */
export function webhookWorkerPart(worker: WebhookDeliveryWorker): Part {
  return { name: 'webhook-worker', start: () => worker.start(), stop: { release: () => worker.stop() } };
}

/**
 * The log writers of this process (none with ROLE=api, their metrics still at 0): each finishes the
 * batch it is writing; what it holds unwritten goes back to the log.
 */
export function logWritersPart(writers: readonly LogWriter[]): Part {
  return {
    name: 'log-writers',
    async start() {
      for (const writer of writers) await writer.start();
    },
    stop: { release: async () => void (await Promise.all(writers.map((writer) => writer.stop()))) },
    metrics: (metrics: Metrics) => registerLogWriterMetrics(metrics, writers),
  };
}
