import type { Database } from '../db/client.js';
import {
  type ClaimedCheck,
  claimDueChecks,
  postponeDomainChecks,
  runClaimedCheck,
} from '../features/tags/lifecycle/tag-checks.js';
import type { TagStateConfig } from '../features/tags/lifecycle/tag-state.js';
import type { Logger } from '../kernel/logger.js';
import type { Metrics } from '../kernel/metrics.js';
import type { DnsResolver } from '../runtime/dns-resolver.js';
import { createPollLoop, type PollLoop } from './poll-loop.js';

/** Checks run at once, and by one partner at most: the other half stays free for everyone else. */
const CONCURRENCY = 8;
const PARTNER_SHARE = 4;
/** A domain whose checks keep timing out backs off up to this many times its first delay. */
const MAX_BACKOFF_FACTOR = 64;

export interface TagMonitorOptions {
  db: Database;
  dns: DnsResolver;
  config: TagStateConfig;
  logger: Logger;
  metrics: Metrics;
}

/**
 * The tag monitor: a background loop that claims due DNS checks from the database and applies each like a verify
 * would: re-checks of unverified custom tags on TAG_RECHECK_SCHEDULE, health checks of verified ones every
 * TAG_HEALTH_INTERVAL.
 */
export function createTagMonitor(options: TagMonitorOptions): PollLoop {
  const { schedule } = options.config;
  const shortest = Math.min(...schedule.recheck, schedule.healthIntervalMs);
  const intervalMs = Math.min(5_000, Math.max(100, Math.floor(shortest / 4)));
  // A check takes at most twice the DNS budget; a run only claims (its deadline bounds the claims).
  const runTimeoutMs = Math.max(10_000, 2 * options.dns.timeoutMs + 5_000);
  const leaseMs = runTimeoutMs + 30_000;
  // A silent domain: first backoff the outage retry (the first re-check interval), doubling up to 64x.
  const backoffBaseMs = Math.min(schedule.recheck[0] ?? 60_000, schedule.healthIntervalMs);
  const backoff = new Map<string, { streak: number; until: number }>();
  const log = options.logger.child({ job: 'tag-monitor' });
  const checks = options.metrics.counter({
    name: 'partner_tags_tag_monitor_checks_total',
    help: 'Background DNS checks of tags by outcome (ok, a failure reason, overtaken by a verify call, error)',
    labelNames: ['outcome'] as const,
  });
  for (const outcome of ['ok', 'error']) checks.inc({ outcome }, 0);
  /** A check that got no answer backs its domain off (once per backoff period); any answer ends it. */
  async function noteDomain(domain: string, outcome: string) {
    const now = Date.now();
    const state = backoff.get(domain);
    if (outcome !== 'RESOLVER_UNAVAILABLE') {
      backoff.delete(domain);
      return;
    }
    let until = state?.until ?? 0;
    if (until <= now) {
      const streak = (state?.streak ?? 0) + 1;
      until = now + backoffBaseMs * Math.min(2 ** (streak - 1), MAX_BACKOFF_FACTOR);
      backoff.delete(domain);
      backoff.set(domain, { streak, until });
      // Remembered for the last 10,000 domains (one forgotten starts again at the first delay).
      if (backoff.size > 10_000) backoff.delete(backoff.keys().next().value as string);
    }
    await postponeDomainChecks(options.db, domain, new Date(until));
  }

  // Checks running in this process, and per partner; each ends by its own DNS budget.
  const held = new Map<string, number>();
  const tasks = new Set<Promise<void>>();

  function startCheck(claim: ClaimedCheck) {
    held.set(claim.partnerId, (held.get(claim.partnerId) ?? 0) + 1);
    const task = (async () => {
      try {
        const outcome = await runClaimedCheck(options.db, options.dns, options.config, claim);
        checks.inc({ outcome });
        if (!claim.livemode) return; // a test-mode check asked no DNS: it says nothing of the domain's servers
        await noteDomain(claim.domain, outcome).catch((error) => {
          log.warn({ err: error, domain: claim.domain }, 'postponing the checks of a silent domain failed');
        });
      } catch (error) {
        checks.inc({ outcome: 'error' });
        // The claim expires and the check is taken again after leaseMs.
        log.error({ err: error, tagId: claim.tagId }, 'tag check failed');
      }
    })().finally(() => {
      tasks.delete(task);
      const left = (held.get(claim.partnerId) ?? 1) - 1;
      if (left === 0) held.delete(claim.partnerId);
      else held.set(claim.partnerId, left);
      // A free slot: look for the next due check now.
      loop.wake();
    });
    tasks.add(task);
  }

  // A run claims one check per free slot and starts it; it never waits for a check to end, so a
  // slow check never keeps the free slots from claiming (a finished check wakes the loop).
  const loop = createPollLoop({
    name: 'tag-monitor',
    intervalMs,
    runTimeoutMs,
    logger: options.logger,
    run: async (signal) => {
      while (!signal.aborted && tasks.size < CONCURRENCY) {
        const [claim] = await claimDueChecks(options.db, 1, leaseMs, {
          slots: CONCURRENCY,
          perPartner: PARTNER_SHARE,
          held,
        });
        if (!claim) break;
        startCheck(claim);
      }
      return false;
    },
  });
  return {
    start: () => loop.start(),
    wake: () => loop.wake(),
    get running() {
      return loop.running;
    },
    /** Stops claiming, then waits for the checks running (each ends within twice the DNS budget). */
    async stop() {
      await loop.stop();
      await Promise.allSettled([...tasks]);
    },
  };
}
