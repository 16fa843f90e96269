import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { Env } from '../kernel/env.js';
import type { AppError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import { type MakeLimiter, rateLimited, windowName } from './rate-limiters.js';

const DAY_SECONDS = 24 * 60 * 60;

/** One volume quota of a tag; `limiter` with Redis, `windows` without. */
interface TagQuota {
  limiter: RateLimiterAbstract | null;
  windows: MemoryWindows | null;
  limit: number;
  unit: 'events' | 'bytes';
  per: string;
  policy: string;
}

/** The volume quotas of a live tag (events and stored bytes per window and per 24 h): see `RateLimits.chargeTag`. */
export class TagQuotas {
  private readonly quotas: TagQuota[];

  constructor(
    env: Env,
    make: MakeLimiter,
    private readonly shared: boolean,
    private readonly logger: Logger,
  ) {
    const perWindow = windowName(env);
    this.quotas = (
      [
        [
          'tagev',
          'tag-events',
          env.COLLECT_TAG_EVENTS_PER_MINUTE,
          'events',
          perWindow,
          env.knobs.rateLimitWindowSeconds,
        ],
        [
          'tagbytes',
          'tag-bytes',
          env.COLLECT_TAG_BYTES_PER_MINUTE,
          'bytes',
          perWindow,
          env.knobs.rateLimitWindowSeconds,
        ],
        ['tagevday', 'tag-events-day', env.COLLECT_TAG_EVENTS_PER_DAY, 'events', 'day', DAY_SECONDS],
        ['tagbytesday', 'tag-bytes-day', env.COLLECT_TAG_BYTES_PER_DAY, 'bytes', 'day', DAY_SECONDS],
      ] as const
    ).flatMap(([name, policyName, limit, unit, per, duration]) => {
      if (limit === 0) return [];
      // Without Redis, plain counters (MemoryWindows): rate-limiter-flexible's would cost a promise,
      // a result and a timer per quota on every collector batch.
      const limiter = shared ? make(name, limit, duration) : null;
      const windows = shared ? null : new MemoryWindows(limit, duration * 1000);
      // The metrics count a refusal carrying a "tag-..." policy as scope `tag` (transport/http/metrics-endpoint.ts).
      return [{ limiter, windows, limit, unit, per, policy: `"${policyName}";q=${limit};w=${duration}` }];
    });
  }

  async charge(tagKey: string, events: number, bytes: number): Promise<void> {
    if (this.quotas.length === 0) return;
    if (!this.shared) {
      this.chargeInMemory(tagKey, events, bytes);
      return;
    }
    await this.chargeInStore(tagKey, events, bytes);
  }

  /** In memory: every quota checked first, then charged, so a refused batch counts nowhere. */
  private chargeInMemory(tagKey: string, events: number, bytes: number): void {
    const now = Date.now();
    let refused: TagQuota | null = null;
    let wait = 0;
    for (const quota of this.quotas) {
      const ms = quota.windows!.wait(tagKey, quota.unit === 'events' ? events : bytes, now);
      if (ms > wait) {
        wait = ms;
        refused = quota;
      }
    }
    if (refused) {
      const left = refused.windows!.remaining(tagKey, now);
      throw refusal(refused, new RateLimiterRes(left, wait, refused.limit - left, false));
    }
    for (const quota of this.quotas) quota.windows!.take(tagKey, quota.unit === 'events' ? events : bytes, now);
  }

  private async chargeInStore(tagKey: string, events: number, bytes: number): Promise<void> {
    const outcomes = await Promise.allSettled(
      this.quotas.map(({ limiter, unit }) => limiter!.consume(tagKey, unit === 'events' ? events : bytes)),
    );
    let refused: { quota: TagQuota; outcome: RateLimiterRes } | null = null;
    outcomes.forEach((settled, index) => {
      if (settled.status === 'fulfilled') return;
      if (!(settled.reason instanceof RateLimiterRes)) {
        this.logger.warn({ err: settled.reason }, 'rate limiter failed; tag quota not charged');
        return;
      }
      // The longest wait: the batch fits only once every refusing quota has room again.
      if (!refused || settled.reason.msBeforeNext > refused.outcome.msBeforeNext) {
        refused = { quota: this.quotas[index]!, outcome: settled.reason };
      }
    });
    if (!refused) return;
    // A refused batch is not stored: give its points back everywhere (the day's budget is not
    // spent by refusals, and a smaller batch still fits what is left).
    this.quotas.forEach(({ limiter, unit }, index) => {
      if (outcomes[index]!.status === 'fulfilled' || outcomes[index]!.reason instanceof RateLimiterRes) {
        limiter!.reward(tagKey, unit === 'events' ? events : bytes).catch(() => {});
      }
    });
    const { quota, outcome } = refused as { quota: TagQuota; outcome: RateLimiterRes };
    throw refusal(quota, outcome);
  }
}

function refusal(quota: TagQuota, outcome: RateLimiterRes): AppError {
  return rateLimited(
    `Collector quota of ${quota.limit} ${quota.unit} per ${quota.per} for this tag exceeded`,
    quota.limit,
    outcome,
    quota.policy,
  );
}

/** Windows kept before expired ones are swept out (the keys are live tags). */
const MAX_WINDOWS = 100_000;

/** Fixed windows counted in memory, synchronously (the tag quotas without Redis). */
class MemoryWindows {
  private readonly windows = new Map<string, { endsAt: number; used: number }>();

  constructor(
    private readonly limit: number,
    private readonly durationMs: number,
  ) {}

  /** Ms until `points` more fit in `key`'s window; 0 when they fit now. */
  wait(key: string, points: number, now: number): number {
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return points <= this.limit ? 0 : this.durationMs;
    return window.used + points <= this.limit ? 0 : window.endsAt - now;
  }

  remaining(key: string, now: number): number {
    const window = this.windows.get(key);
    return !window || window.endsAt <= now ? this.limit : Math.max(0, this.limit - window.used);
  }

  take(key: string, points: number, now: number): void {
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (this.windows.size >= MAX_WINDOWS) {
        for (const [other, { endsAt }] of this.windows) if (endsAt <= now) this.windows.delete(other);
      }
      window = { endsAt: now + this.durationMs, used: 0 };
      this.windows.set(key, window);
    }
    window.used += points;
  }
}
