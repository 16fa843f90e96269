import type { Database } from '../db/client.js';
import {
  claimRetention,
  expireRound,
  finishRetention,
  RETENTION_BATCH,
  type RetentionCounts,
  releaseRetention,
} from '../features/events/retention/expire-events.js';
import type { StatsStore } from '../features/stats/store.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

export interface EventRetentionOptions {
  db: Database;
  /** The statistics, expired with the events (undefined: none in this process). */
  stats?: StatsStore | undefined;
  logger: Logger;
  metrics?: Metrics;
  /** EVENT_RETENTION_DAYS: the period of merchants whose partner sets none (undefined: kept forever). */
  serverDays: number | undefined;
  /** EVENT_RETENTION_INTERVAL: how often each merchant with a period gets a pass. */
  everyMs: number;
  /** Rows per statement (default RETENTION_BATCH). */
  batch?: number;
  /** How long one run works a merchant before it gives it back for the next run (default 20 s). */
  runBudgetMs?: number;
  /** After each round, a pause of this many times its duration (default 1, as the merchant purge). */
  pauseRatio?: number;
}

/** Event retention: each run claims the merchant most overdue for a pass. */
export function createEventRetention(options: EventRetentionOptions): PollLoop {
  const log = options.logger.child({ job: 'event-retention' });
  const budgetMs = options.runBudgetMs ?? 20_000;
  const batch = options.batch ?? RETENTION_BATCH;
  const pauseRatio = options.pauseRatio ?? 1;
  const removed = options.metrics?.counter({
    name: 'partner_tags_event_retention_deleted_total',
    help: 'Events removed by event retention',
    labelNames: ['table'] as const,
  });
  return createPollLoop({
    name: 'event-retention',
    intervalMs: Math.min(options.everyMs, 30_000),
    // The lease outlives the run's deadline: a run cut there still owns the merchant until released.
    runTimeoutMs: budgetMs + 30_000,
    logger: options.logger,
    run: async (signal) => {
      const claim = await claimRetention(options.db, {
        leaseMs: budgetMs + 60_000,
        everyMs: options.everyMs,
        serverDays: options.serverDays,
      });
      if (!claim) return false;
      const started = Date.now();
      const total: Partial<RetentionCounts> = {};
      for (;;) {
        const roundStarted = Date.now();
        const { counts, futureSeqs } = await expireRound(options.db, claim, batch);
        if (futureSeqs.length > 0) await options.stats?.forgetSeqs(claim.merchantId, futureSeqs);
        for (const [table, n] of Object.entries(counts) as [keyof RetentionCounts, number][]) {
          total[table] = (total[table] ?? 0) + n;
          if (n > 0) removed?.inc({ table: table === 'future_dated' ? 'events' : table }, n);
        }
        if (Object.values(counts).every((n) => n < batch)) break;
        if (signal.aborted || Date.now() - started > budgetMs) {
          await releaseRetention(options.db, claim);
          log.info({ merchantId: claim.merchantId, removed: total }, 'event retention: continues in the next run');
          return true;
        }
        const pause = (Date.now() - roundStarted) * pauseRatio;
        if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      }
      await options.stats?.expireBefore(claim.merchantId, new Date(claim.cutoff));
      const finished = await finishRetention(options.db, claim);
      if (Object.values(total).some((n) => n > 0)) {
        log.info(
          { merchantId: claim.merchantId, cutoff: claim.cutoff, removed: total, finished },
          'event retention pass',
        );
      }
      return true;
    },
  });
}
