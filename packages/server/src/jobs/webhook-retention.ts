import type { Database } from '../db/client.js';
import { deleteExpiredWebhooks, RETENTION_BATCH } from '../features/webhooks/expired-webhooks.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

const HOUR_MS = 3_600_000;

export interface WebhookRetentionOptions {
  db: Database;
  /** WEBHOOK_RETENTION (ms). */
  retentionMs: number;
  logger: Logger;
  metrics?: Metrics;
  /** Pause between passes when nothing is left to delete (default 1 h, with the loop's jitter). */
  intervalMs?: number;
}

/** Webhook retention: every process that delivers webhooks runs it, at start and then about hourly. */
export function createWebhookRetention(options: WebhookRetentionOptions): PollLoop {
  const log = options.logger.child({ job: 'webhook-retention' });
  const deleted = options.metrics?.counter({
    name: 'partner_tags_webhook_retention_deleted_total',
    help: 'Webhook rows deleted by retention (WEBHOOK_RETENTION), by table: deliveries, messages, endpoints',
    labelNames: ['table'] as const,
  });
  for (const table of ['deliveries', 'messages', 'endpoints']) deleted?.inc({ table }, 0);
  return createPollLoop({
    name: 'webhook-retention',
    intervalMs: options.intervalMs ?? HOUR_MS,
    runTimeoutMs: 60_000,
    logger: options.logger,
    run: async (signal) => {
      const pass = await deleteExpiredWebhooks(options.db, options.retentionMs);
      const counts = Object.values(pass);
      for (const [table, n] of Object.entries(pass)) deleted?.inc({ table }, n);
      if (counts.some((n) => n > 0)) log.info(pass, 'deleted webhook rows past retention');
      return !signal.aborted && counts.some((n) => n === RETENTION_BATCH);
    },
  });
}
