import type { Database } from '../db/client.js';
import {
  claimErasure,
  ERASURE_BATCH,
  type ErasureClaim,
  eraseRound,
  finishErasure,
  merchantsInScope,
  releaseErasure,
} from '../features/erasures/erase-visitor.js';
import type { StatsStore } from '../features/stats/store.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

export interface VisitorErasureOptions {
  db: Database;
  /** The statistics, erased from last (undefined: none in this process). */
  stats?: StatsStore | undefined;
  logger: Logger;
  metrics?: Metrics;
  /** How long after its creation an erasure starts: statements that did not see its suppression have committed. */
  graceMs: number;
  /** How long a completed erasure without `suppress` keeps dropping the visitor's events (log mode: the log's age limit). */
  holdMs: number;
  /** Pause between looks when no erasure is waiting (default 5 s, with the loop's jitter). */
  intervalMs?: number;
  /** Events per statement (default ERASURE_BATCH). */
  batch?: number;
  /** How long one run works before it gives the erasure back for the next run (default 20 s). */
  runBudgetMs?: number;
  /** After each round, a pause of this many times its duration (default 1), as the merchant purge does. */
  pauseRatio?: number;
}

/** The background erasure of visitors. */
export function createVisitorErasure(options: VisitorErasureOptions): PollLoop {
  const log = options.logger.child({ job: 'visitor-erasure' });
  const budgetMs = options.runBudgetMs ?? 20_000;
  const batch = options.batch ?? ERASURE_BATCH;
  const pauseRatio = options.pauseRatio ?? 1;
  const erased = options.metrics?.counter({
    name: 'partner_tags_erasure_events_deleted_total',
    help: 'Events deleted by visitor erasures',
  });
  const rounds = async (claim: ErasureClaim, signal: AbortSignal): Promise<'done' | 'budget' | 'later'> => {
    const started = Date.now();
    for (;;) {
      const roundStarted = Date.now();
      const deleted = await eraseRound(options.db, claim, batch);
      if (deleted > 0) erased?.inc(deleted);
      if (deleted === 0) break;
      if (signal.aborted || Date.now() - started > budgetMs) return 'budget';
      const pause = (Date.now() - roundStarted) * pauseRatio;
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
    if (!options.stats) return 'done';
    const merchants = await merchantsInScope(options.db, claim);
    return (await options.stats.forgetVisitor(merchants, claim.muid)) ? 'done' : 'later';
  };
  return createPollLoop({
    name: 'visitor-erasure',
    intervalMs: options.intervalMs ?? 5_000,
    // The lease outlives the run's deadline: a run cut there still owns the erasure until released.
    runTimeoutMs: budgetMs + 30_000,
    logger: options.logger,
    run: async (signal) => {
      const claim = await claimErasure(options.db, { leaseMs: budgetMs + 60_000, graceMs: options.graceMs });
      if (!claim) return false;
      const outcome = await rounds(claim, signal);
      if (outcome !== 'done') {
        await releaseErasure(options.db, claim);
        log.info({ erasureId: claim.id }, 'visitor erasure: continues in the next run');
        return outcome === 'budget';
      }
      const finished = await finishErasure(options.db, claim, options.holdMs);
      log.info({ erasureId: claim.id, finished }, 'visitor erased');
      return true;
    },
  });
}
