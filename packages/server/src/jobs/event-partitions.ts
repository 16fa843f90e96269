import type { Database } from '../db/client.js';
import {
  createPartitionsAhead,
  MONTHS_AHEAD,
  truncateExpiredPartitions,
} from '../features/events/partitions/event-partitions.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

export interface EventPartitionsOptions {
  db: Database;
  logger: Logger;
  metrics?: Metrics;
  /** EVENT_RETENTION_DAYS: the period of merchants whose partner sets none (undefined: kept forever). */
  serverDays: number | undefined;
  /** Whether expired months are emptied whole (EVENT_RETENTION=on); months are created ahead regardless. */
  emptyExpired: boolean;
  /** How often it looks (default hourly; the first run is at start). */
  intervalMs?: number;
  monthsAhead?: number;
}

/** The monthly partitions of `events`. */
export function createEventPartitions(options: EventPartitionsOptions): PollLoop {
  const log = options.logger.child({ job: 'event-partitions' });
  const changed = options.metrics?.counter({
    name: 'partner_tags_event_partitions_total',
    help: 'Monthly partitions of the events table created ahead, or emptied whole by retention',
    labelNames: ['action'] as const,
  });
  return createPollLoop({
    name: 'event-partitions',
    intervalMs: options.intervalMs ?? 3_600_000,
    logger: options.logger,
    run: async () => {
      const created = await createPartitionsAhead(options.db, options.monthsAhead ?? MONTHS_AHEAD);
      const emptied = options.emptyExpired
        ? await truncateExpiredPartitions(options.db, { serverDays: options.serverDays })
        : [];
      if (created.length > 0) changed?.inc({ action: 'created' }, created.length);
      if (emptied.length > 0) changed?.inc({ action: 'emptied' }, emptied.length);
      if (created.length > 0 || emptied.length > 0) log.info({ created, emptied }, 'event partitions');
      return false;
    },
  });
}
