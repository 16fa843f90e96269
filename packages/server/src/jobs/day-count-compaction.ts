import type { Database } from '../db/client.js';
import { COMPACT_BATCH, compactDayCounts } from '../features/events/day-counts/compact-day-counts.js';
import type { Logger } from '../kernel/logger.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

export interface DayCountCompactionOptions {
  db: Database;
  logger: Logger;
  /** Pause between passes (default 5 s; a full batch runs the next at once). */
  intervalMs?: number;
  batch?: number;
}

/** Merges `event_day_counts`' delta rows per key. */
export function createDayCountCompaction(options: DayCountCompactionOptions): PollLoop {
  const batch = options.batch ?? COMPACT_BATCH;
  return createPollLoop({
    name: 'day-count-compaction',
    intervalMs: options.intervalMs ?? 5_000,
    logger: options.logger,
    run: async () => (await compactDayCounts(options.db, batch)) >= batch,
  });
}
