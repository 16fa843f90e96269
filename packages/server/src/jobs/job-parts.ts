import type { Metrics } from '../kernel/metrics.js';
import { registerLogWriterMetrics } from '../runtime/event-log-metrics.js';
import type { Part } from '../runtime/lifecycle.js';
import type { LogWriter } from './event-log-writer.js';
import type { PollLoop } from './poll-loop.js';
import type { WebhookDeliveryWorker } from './webhook-delivery.js';

// The background jobs as lifecycle parts (runtime/lifecycle.ts).

/** The tag monitor: no new check is claimed from the first phase on. */
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

/** A background loop as a part, named as the loop: started with the app, stopped on release. */
export function pollLoopPart(name: string, loop: PollLoop): Part {
  return { name, start: () => loop.start(), stop: { release: () => loop.stop() } };
}

/** Requests in flight end by their deadline; claimed but unsent deliveries are given back. */
export function webhookWorkerPart(worker: WebhookDeliveryWorker): Part {
  return { name: 'webhook-worker', start: () => worker.start(), stop: { release: () => worker.stop() } };
}

/** The log writers of this process: each finishes the batch it is writing. */
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
