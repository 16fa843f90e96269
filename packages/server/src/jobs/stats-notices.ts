import type { StatsDeps } from '../features/stats/visitors-by-hour.js';
import { expireNotices } from '../features/stats-notices/due.js';
import { checkSpikes, FIRST_MERCHANT, sendDueDigests } from '../features/stats-notices/passes.js';
import { lastWholeHour } from '../features/stats-notices/spike.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

export interface StatsNoticesOptions {
  deps: StatsDeps;
  logger: Logger;
  metrics?: Metrics;
  /** How often each walk looks (default 60 s). */
  intervalMs?: number;
  /** Merchants per run (default 20). */
  batch?: number;
  /** Each merchant's deadline (default 20 s). */
  merchantTimeoutMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** Notices older than this are deleted (only the current week's and day's are ever looked up). */
const KEEP_DAYS = 45;

/**
 * The statistics' webhooks (docs/decisions/digests.md): two walks over the merchants in id order, a
 * page of `batch` per run, each merchant under its deadline. The digest walk sends last week's
 * digest to merchants whose Monday 06:00 has come; the spike walk looks once per process at each
 * whole hour. A merchant that fails is passed over until the next walk (never holding the others
 * up); every process may run both: `stats_notices`' key lets one notice through.
 */
export function createStatsNotices(options: StatsNoticesOptions): { digests: PollLoop; spikes: PollLoop } {
  const now = options.now ?? Date.now;
  const log = options.logger.child({ job: 'stats-notices' });
  const sent = options.metrics?.counter({
    name: 'partner_tags_stats_notices_total',
    help: 'Statistics webhooks (stats.digest, stats.spike) enqueued, and merchants whose build failed',
    labelNames: ['kind', 'outcome'] as const,
  });
  const intervalMs = options.intervalMs ?? 60_000;
  const merchantTimeoutMs = options.merchantTimeoutMs ?? 20_000;
  const pass = { limit: options.batch ?? 20, merchantTimeoutMs, logger: log };
  const count = (kind: string, result: { sent: number; failed: number }) => {
    if (result.sent > 0) sent?.inc({ kind, outcome: 'sent' }, result.sent);
    if (result.failed > 0) sent?.inc({ kind, outcome: 'failed' }, result.failed);
  };
  // Each run works at most `limit` merchants, one at a time, each under its deadline.
  const runTimeoutMs = pass.limit * merchantTimeoutMs + 30_000;

  let digestAfter = FIRST_MERCHANT;
  const digests = createPollLoop({
    name: 'stats-digests',
    intervalMs,
    runTimeoutMs,
    logger: options.logger,
    run: async (signal) => {
      if (digestAfter === FIRST_MERCHANT) await expireNotices(options.deps.db, KEEP_DAYS);
      const result = await sendDueDigests(options.deps, { ...pass, now: now(), after: digestAfter, signal });
      count('digest', result);
      digestAfter = result.more ? result.last : FIRST_MERCHANT;
      return result.more;
    },
  });

  // The spike walk of one hour: from the first merchant, once, then nothing until the next hour.
  let spikeHour = 0;
  let spikeAfter: string | null = FIRST_MERCHANT;
  const spikes = createPollLoop({
    name: 'stats-spikes',
    intervalMs,
    runTimeoutMs,
    logger: options.logger,
    run: async (signal) => {
      const hour = lastWholeHour(now());
      if (hour !== spikeHour) {
        spikeHour = hour;
        spikeAfter = FIRST_MERCHANT;
      }
      if (spikeAfter === null) return false;
      const result = await checkSpikes(options.deps, hour, { ...pass, now: now(), after: spikeAfter, signal });
      count('spike', result);
      spikeAfter = result.more ? result.last : null;
      return result.more;
    },
  });
  return { digests, spikes };
}
