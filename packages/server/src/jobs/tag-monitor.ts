import type { Database } from '../db/client.js';
import type { DnsResolver } from '../dns/resolver.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { claimDueChecks, runClaimedCheck } from '../services/tag/tag-monitor.js';
import type { TagStateConfig } from '../services/tag/tag-state.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

/** Checks claimed per run, and run at once. */
const CLAIM_BATCH = 32;
const CONCURRENCY = 8;

export interface TagMonitorOptions {
  db: Database;
  dns: DnsResolver;
  config: TagStateConfig;
  logger: Logger;
  metrics: Metrics;
}

/**
 * The tag monitor: a background loop (jobs/poll-loop.ts) that claims due DNS checks from the
 * database (services/tag/tag-monitor.ts) and applies each like a verify would
 * (services/tag/tag-state.ts): re-checks of unverified custom tags on TAG_RECHECK_SCHEDULE, health
 * checks of verified ones every TAG_HEALTH_INTERVAL. Due times live in the tags table, so the loop
 * only decides when this process looks (a quarter of the shortest interval, 100 ms to 5 s); with
 * several processes each due check runs once. A claim lasts a run's deadline plus a margin.
 */
export function createTagMonitor(options: TagMonitorOptions): PollLoop {
  const { schedule } = options.config;
  const shortest = Math.min(...schedule.recheck, schedule.healthIntervalMs);
  const intervalMs = Math.min(5_000, Math.max(100, Math.floor(shortest / 4)));
  // A check takes at most twice the DNS budget; a run a few rounds of CONCURRENCY checks.
  const runTimeoutMs = Math.max(10_000, 2 * options.dns.timeoutMs * Math.ceil(CLAIM_BATCH / CONCURRENCY) + 5_000);
  const leaseMs = runTimeoutMs + 30_000;
  const log = options.logger.child({ job: 'tag-monitor' });
  const checks = options.metrics.counter({
    name: 'partner_tags_tag_monitor_checks_total',
    help: 'Background DNS checks of tags by outcome (ok, a failure reason, overtaken by a verify call, error)',
    labelNames: ['outcome'] as const,
  });
  for (const outcome of ['ok', 'error']) checks.inc({ outcome }, 0);
  return createPollLoop({
    name: 'tag-monitor',
    intervalMs,
    runTimeoutMs,
    logger: options.logger,
    run: async (signal) => {
      const claims = await claimDueChecks(options.db, CLAIM_BATCH, leaseMs);
      let next = 0;
      const worker = async () => {
        while (next < claims.length && !signal.aborted) {
          const claim = claims[next++]!;
          try {
            checks.inc({ outcome: await runClaimedCheck(options.db, options.dns, options.config, claim) });
          } catch (error) {
            checks.inc({ outcome: 'error' });
            // The claim expires and the check is taken again after leaseMs.
            log.error({ err: error, tagId: claim.tagId }, 'tag check failed');
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, claims.length) }, worker));
      return claims.length === CLAIM_BATCH;
    },
  });
}
