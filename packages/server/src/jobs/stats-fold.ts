import type { Database } from '../db/client.js';
import { foldPass } from '../features/stats/fold.js';
import type { Logger } from '../kernel/logger.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

/** The fold's pause while ranges are pending, and how soon stored events wake an idle one. */
export const STATS_FOLD_INTERVAL_MS = 1_000;

/**
 * Folds stored events into the statistics' aggregates (features/stats/fold.ts) about every second,
 * at once again while a pass comes back full, backing off to every 8 s until stored events wake it.
 * Every process runs it (unless STATS_FOLD=off); folds skip each other's ranges. Stats reads also
 * fold first, so this only keeps the queue short between reads.
 */
export function createStatsFold(options: { db: Database; logger: Logger; intervalMs?: number }): PollLoop {
  return createPollLoop({
    name: 'stats-fold',
    intervalMs: options.intervalMs ?? STATS_FOLD_INTERVAL_MS,
    // Idle, it backs off: reads fold first, so a longer pause never delays what a read sees.
    maxIdleIntervalMs: Math.max(options.intervalMs ?? STATS_FOLD_INTERVAL_MS, 8_000),
    runTimeoutMs: 60_000,
    logger: options.logger,
    // At once again after a full pass; after a smaller one, the next insert's wake-up (within the interval).
    run: async () => (await foldPass(options.db)).full,
  });
}
