import type { Metrics } from '../kernel/metrics.js';
import type { EventLog } from './event-log.js';

/** Log mode: messages the writers set aside without storing them, by why. */
export function logRejectedCounter(metrics: Metrics) {
  return metrics.counter({
    name: 'partner_tags_event_log_rejected_total',
    help: 'Log mode: messages terminated without being stored, by reason (the database refused their values, unreadable, repeated failure)',
    labelNames: ['reason'] as const,
  });
}

/** What this process's log writers counted since start. */
export function registerLogWriterMetrics(
  metrics: Metrics,
  writers: readonly { stats: { events: number; retries: number } }[],
): void {
  logRejectedCounter(metrics);
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
}

/** The connection to NATS and the log lag, sampled from NATS at scrape time. */
export function registerEventLogMetrics(metrics: Metrics, eventLog: EventLog): void {
  metrics.gaugeOf('partner_tags_event_log_connected', 'Log mode: 1 while the connection to NATS is up', () =>
    eventLog.isConnected ? 1 : 0,
  );
  const sampleLag = lagSampler(eventLog);
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

type LagSample = { pending: number; ackPending: number } | null;

/**
 * The log lag read from NATS with a deadline. prom-client starts every metric's collect of a scrape in the same tick:
 * the metrics above share one sample per scrape.
 */
function lagSampler(eventLog: EventLog): () => Promise<LagSample> {
  let lagSample: Promise<LagSample> | undefined;
  return () => {
    lagSample ??= eventLog.consumerLag(1_000).then(
      (sample) => sample,
      () => null,
    );
    const current = lagSample;
    void current.then(() => {
      if (lagSample === current) lagSample = undefined;
    });
    return current;
  };
}
