import type { Database } from '../db/client.js';
import {
  claimDeletedMerchant,
  finishPurge,
  PURGE_BATCH,
  type PurgeCounts,
  purgeRound,
  releasePurge,
} from '../features/merchants/purge-merchant.js';
import type { StatsStore } from '../features/stats/store.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

export interface MerchantPurgeOptions {
  db: Database;
  /** The statistics, purged last (undefined: none in this process). */
  stats?: StatsStore | undefined;
  logger: Logger;
  metrics?: Metrics;
  /** How long after its DELETE a merchant is purged: events accepted before it have committed by then. */
  graceMs: number;
  /** Pause between looks when no deleted merchant is waiting (default 5 s, with the loop's jitter). */
  intervalMs?: number;
  /** Rows per statement (default PURGE_BATCH). */
  batch?: number;
  /** How long one run purges before it gives the merchant back for the next run (default 20 s). */
  runBudgetMs?: number;
  /** After each round, a pause of this many times the round's duration. */
  pauseRatio?: number;
}

/** The background purge of deleted merchants. */
export function createMerchantPurge(options: MerchantPurgeOptions): PollLoop {
  const log = options.logger.child({ job: 'merchant-purge' });
  const budgetMs = options.runBudgetMs ?? 20_000;
  const batch = options.batch ?? PURGE_BATCH;
  const pauseRatio = options.pauseRatio ?? 1;
  const deleted = options.metrics?.counter({
    name: 'partner_tags_merchant_purge_deleted_total',
    help: 'Rows deleted by the purge of deleted merchants, by table',
    labelNames: ['table'] as const,
  });
  return createPollLoop({
    name: 'merchant-purge',
    intervalMs: options.intervalMs ?? 5_000,
    // The lease outlives the run's deadline: a run cut there still owns the merchant until released.
    runTimeoutMs: budgetMs + 30_000,
    logger: options.logger,
    run: async (signal) => {
      const claim = await claimDeletedMerchant(options.db, { leaseMs: budgetMs + 60_000, graceMs: options.graceMs });
      if (!claim) return false;
      const started = Date.now();
      const total: PurgeCounts = {};
      for (;;) {
        const roundStarted = Date.now();
        const counts = await purgeRound(options.db, claim, batch);
        for (const [table, n] of Object.entries(counts)) {
          total[table] = (total[table] ?? 0) + n;
          if (n > 0) deleted?.inc({ table }, n);
        }
        if (Object.values(counts).every((n) => n === 0)) break;
        if (signal.aborted || Date.now() - started > budgetMs) {
          await releasePurge(options.db, claim);
          log.info({ merchantId: claim.merchantId, deleted: total }, 'merchant purge: continues in the next run');
          return true;
        }
        const pause = (Date.now() - roundStarted) * pauseRatio;
        if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      }
      if (options.stats && !(await options.stats.purgeMerchant(claim.merchantId))) {
        // Events stored before the DELETE are still on their way to the statistics: next run.
        await releasePurge(options.db, claim);
        return false;
      }
      const finished = await finishPurge(options.db, claim);
      log.info({ merchantId: claim.merchantId, deleted: total, finished }, 'merchant purged');
      return true;
    },
  });
}
