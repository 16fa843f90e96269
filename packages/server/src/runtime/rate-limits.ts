import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { type AuthenticatedPartner, bearerToken } from '../features/partners/authenticate.js';
import { hashApiKey, isWellFormedApiKey } from '../features/partners/key-hash.js';
import type { Env } from '../kernel/env.js';
import { AppError, statusOf } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import { errorCode, maskUrl, StartupError } from '../kernel/startup-error.js';
import { addressBudgetKey } from './address-budget-key.js';
import type { ApiKeys } from './keys/api-keys.js';

/**
 * Who a call comes from, as the rate-limit policy sees it: the client address, and where the
 * `RateLimit-*` headers of a successful charge go (the HTTP response; nowhere for in-process
 * callers). An HTTP request's is made by transport/http/request-client.ts.
 */
export interface RateLimitClient {
  ip: string;
  setHeader(name: string, value: string): void;
  /**
   * Body bytes of the request not yet charged to the address's collector byte budget: the declared
   * Content-Length, charged by the first collector call of the request (a tRPC batch's body is one
   * body), then 0; `UNKNOWN_BODY_BYTES` for a body without one (chunked), charged once read.
   */
  unchargedBytes: number;
}

/** `RateLimitClient.unchargedBytes` of a body whose size is known only once read. */
export const UNKNOWN_BODY_BYTES = -1;

/**
 * The one rate-limit policy, the same for every way in (REST, /trpc with each call of a batch
 * counted, the event streams, the browser collector): see docs/decisions/rate-limits-and-quotas.md.
 */
export interface RateLimits {
  /**
   * Authenticates `authorization`, then charges one point to the key (never before: a random key
   * creates no limiter entry). Every failed authentication counts against the client address and
   * the presented key (by hash). An address over its failure budget gets 429 RATE_LIMITED (with
   * Retry-After), unread, for any token but the keys this process knows (cached, or authenticated
   * within a day); a key over its own failure budget gets 429 before its database read. Over the
   * key's budget: 429 with Retry-After.
   */
  authenticate(authorization: string | string[] | undefined, client: RateLimitClient): Promise<AuthenticatedPartner>;
  /**
   * One point of the client address's collector budget (`POST /v1/collect`, `collect.ingest`,
   * `POST /e`), and the request's body bytes to its byte budget. Addresses are keyed by
   * `addressBudgetKey` (IPv6 by /64).
   */
  limitCollector(client: RateLimitClient): Promise<void>;
  /** A body read without a declared length (chunked): its `bytes` go to the address's byte budget now. */
  chargeReadBytes(client: RateLimitClient, bytes: number): Promise<void>;
  /**
   * The volume quotas of a live tag (events and stored bytes per window and per 24 h), charged once
   * the tag is known live (a made-up tag id creates no entry). Over any: 429 with Retry-After, and
   * nothing of the refused batch stays counted. No store round trip beyond the limiter's own.
   */
  chargeTag(tagKey: string, events: number, bytes: number): Promise<void>;
  /**
   * Counts one failed authentication that is not an API key's (the `/metrics` token) into the
   * address's failure budget; 429 once the address is over it (the caller answers 401 otherwise).
   */
  countAuthFailure(client: RateLimitClient): Promise<void>;
  /** True when budgets are shared through Redis. */
  readonly shared: boolean;
  close(): Promise<void>;
}

function limitHeaders(limit: number, result: RateLimiterRes): Record<string, string> {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, result.remainingPoints)),
    'RateLimit-Reset': String(Math.max(0, Math.ceil(result.msBeforeNext / 1000))),
  };
}

/**
 * Rate limits with rate-limiter-flexible: in memory per process, or in Redis (shared by every
 * instance) when REDIS_URL is set. If Redis stops answering, an in-memory limiter of the same
 * budget takes over (the `insuranceLimiter`), so a Redis outage never fails a request.
 */
export async function createRateLimits(env: Env, logger: Logger, keys: ApiKeys): Promise<RateLimits> {
  let redis: Redis | undefined;
  if (env.REDIS_URL) {
    redis = new Redis(env.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      lazyConnect: true,
    });
    let lastError: unknown;
    redis.on('error', (error: Error) => {
      lastError = error;
      logger.warn({ err: error }, 'rate-limit store (Redis) error');
    });
    try {
      await redis.connect();
    } catch (error) {
      // A configured Redis that does not answer at start is a configuration error (an outage
      // later is not: the in-memory limiter takes over while it lasts).
      redis.disconnect();
      throw new StartupError(
        `Cannot reach Redis at REDIS_URL=${maskUrl(env.REDIS_URL)} (${errorCode(lastError ?? error)}): start Redis there or fix REDIS_URL`,
        { cause: error },
      );
    }
  }

  const make = (name: string, points: number, duration = env.RATE_LIMIT_WINDOW_SECONDS): RateLimiterAbstract | null => {
    if (points === 0) return null;
    const memory = new RateLimiterMemory({ points, duration, keyPrefix: name });
    if (!redis) return memory;
    return new RateLimiterRedis({
      storeClient: redis,
      points,
      duration,
      keyPrefix: `${env.RATE_LIMIT_KEY_PREFIX}:${name}`,
      insuranceLimiter: memory,
    });
  };
  const apiKeyLimiter = make('key', env.RATE_LIMIT_PER_MINUTE);
  const collectLimiter = make('ip', env.COLLECT_RATE_LIMIT_PER_MINUTE);
  const collectBytesLimiter = make('ipbytes', env.COLLECT_BYTES_PER_ADDRESS_PER_MINUTE);
  const authFailureLimiter = make('authfail', env.AUTH_FAILURE_LIMIT_PER_MINUTE);
  const keyFailureLimiter = make('keyfail', env.AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE);
  const perWindow = env.RATE_LIMIT_WINDOW_SECONDS === 60 ? 'minute' : `${env.RATE_LIMIT_WINDOW_SECONDS} s`;
  const tagQuotas = (
    [
      ['tagev', 'tag-events', env.COLLECT_TAG_EVENTS_PER_MINUTE, 'events', perWindow, env.RATE_LIMIT_WINDOW_SECONDS],
      ['tagbytes', 'tag-bytes', env.COLLECT_TAG_BYTES_PER_MINUTE, 'bytes', perWindow, env.RATE_LIMIT_WINDOW_SECONDS],
      ['tagevday', 'tag-events-day', env.COLLECT_TAG_EVENTS_PER_DAY, 'events', 'day', DAY_SECONDS],
      ['tagbytesday', 'tag-bytes-day', env.COLLECT_TAG_BYTES_PER_DAY, 'bytes', 'day', DAY_SECONDS],
    ] as const
  ).flatMap(([name, policyName, limit, unit, per, duration]) => {
    if (limit === 0) return [];
    // Without Redis, plain counters (MemoryWindows): rate-limiter-flexible's would cost a promise,
    // a result and a timer per quota on every collector batch.
    const limiter = redis ? make(name, limit, duration) : null;
    const windows = redis ? null : new MemoryWindows(limit, duration * 1000);
    // The metrics count a refusal carrying a "tag-..." policy as scope `tag` (transport/http/metrics-endpoint.ts).
    return [{ limiter, windows, limit, unit, per, policy: `"${policyName}";q=${limit};w=${duration}` }];
  });
  // Keys that authenticated here lately: a throttled address still gets them looked up.
  const provenKeys = new ProvenKeys();

  /** `policy`: the refusing quota as a `RateLimit-Policy` item (`"name";q=limit;w=seconds`), when not the usual budget. */
  const rateLimited = (message: string, limit: number, outcome: RateLimiterRes, policy?: string): AppError => {
    const retryAfter = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
    const headers: Record<string, string> = { ...limitHeaders(limit, outcome), 'Retry-After': String(retryAfter) };
    if (policy) headers['RateLimit-Policy'] = policy;
    return new AppError('RATE_LIMITED', `${message}; retry after ${retryAfter} s`, { headers });
  };

  const consume = async (
    limiter: RateLimiterAbstract | null,
    limit: number,
    key: string,
    client: RateLimitClient,
    what: string,
  ): Promise<void> => {
    if (!limiter) return;
    try {
      const result = await limiter.consume(key, 1);
      for (const [name, value] of Object.entries(limitHeaders(limit, result))) client.setHeader(name, value);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        // The store failed and no insurance answered: let the request through rather than fail it.
        logger.warn({ err: outcome }, 'rate limiter failed; request let through');
        return;
      }
      throw rateLimited(`Rate limit of ${limit} requests per ${perWindow} ${what} exceeded`, limit, outcome);
    }
  };

  /** The limiter's state when `key` already used all of `limit` in the window; null otherwise (or when the store failed). */
  const overLimit = async (
    limiter: RateLimiterAbstract | null,
    limit: number,
    key: string,
  ): Promise<RateLimiterRes | null> => {
    if (!limiter) return null;
    try {
      const state = await limiter.get(key);
      return state && state.consumedPoints >= limit ? state : null;
    } catch (error) {
      logger.warn({ err: error }, 'rate limiter failed; authentication not throttled');
      return null;
    }
  };

  const addressThrottled = (state: RateLimiterRes): AppError =>
    rateLimited(
      `Too many failed authentications from this address (limit ${env.AUTH_FAILURE_LIMIT_PER_MINUTE} per ${perWindow})`,
      env.AUTH_FAILURE_LIMIT_PER_MINUTE,
      state,
    );

  const countFailure = async (limiter: RateLimiterAbstract | null, key: string): Promise<void> => {
    if (!limiter) return;
    // Over the limit `consume` rejects: this attempt is answered 401 anyway, the next ones 429.
    await limiter.consume(key, 1).catch(() => {});
  };

  /**
   * True for a token this process knows to be a key: in the verified-key cache, or authenticated
   * here lately. Asked only for a throttled address (one hash then), so that its flood of unknown
   * tokens costs no database read while the valid keys of its other users keep working.
   */
  const knownKey = (authorization: string | string[] | undefined): boolean => {
    const token = bearerToken(authorization);
    if (token === null || !isWellFormedApiKey(token)) return false;
    const hash = hashApiKey(token);
    return keys.cache.get(hash) !== undefined || provenKeys.has(hash);
  };

  const chargeBytes = async (address: string, client: RateLimitClient, bytes: number): Promise<void> => {
    client.unchargedBytes = 0;
    if (bytes === 0 || !collectBytesLimiter) return;
    try {
      await collectBytesLimiter.consume(address, bytes);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        logger.warn({ err: outcome }, 'rate limiter failed; request let through');
        return;
      }
      const limit = env.COLLECT_BYTES_PER_ADDRESS_PER_MINUTE;
      throw rateLimited(
        `Collector byte limit of ${limit} bytes per ${perWindow} per client address exceeded`,
        limit,
        outcome,
      );
    }
  };

  return {
    shared: Boolean(redis),
    authenticate: async (authorization, client) => {
      const address = addressBudgetKey(client.ip);
      // An address over its failure budget (carrier NAT: many users, one of them failing) keeps
      // its known keys; anything else it sends is refused unread until the window ends.
      const throttled = await overLimit(authFailureLimiter, env.AUTH_FAILURE_LIMIT_PER_MINUTE, address);
      if (throttled && !knownKey(authorization)) throw addressThrottled(throttled);
      let lookedUp: string | null = null;
      let partner: AuthenticatedPartner;
      try {
        partner = await keys.authenticate(authorization, async (hash) => {
          // Only a token that is not in the key cache gets here, before its database read.
          lookedUp = hash.slice(0, 32);
          const failing = await overLimit(keyFailureLimiter, env.AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE, lookedUp);
          if (failing) {
            throw rateLimited(
              `Too many failed authentications with this key (limit ${env.AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE} per ${perWindow})`,
              env.AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE,
              failing,
            );
          }
        });
      } catch (error) {
        if (error instanceof AppError && statusOf(error) === 401) {
          await Promise.all([
            countFailure(authFailureLimiter, address),
            lookedUp === null ? undefined : countFailure(keyFailureLimiter, lookedUp),
          ]);
        }
        throw error;
      }
      if (lookedUp !== null) provenKeys.add(lookedUp);
      if (!apiKeyLimiter) return partner;
      // Keyed by the key's id (or, for a partner without one, its hash, truncated): the key itself
      // never reaches the store.
      const budgetKey = partner.key?.id ?? hashApiKey(bearerToken(authorization) ?? '').slice(0, 32);
      await consume(apiKeyLimiter, env.RATE_LIMIT_PER_MINUTE, budgetKey, client, 'per API key');
      return partner;
    },
    limitCollector: async (client) => {
      const address = addressBudgetKey(client.ip);
      await consume(collectLimiter, env.COLLECT_RATE_LIMIT_PER_MINUTE, address, client, 'per client address');
      // Declared bytes are refused before the body is read.
      if (client.unchargedBytes > 0) await chargeBytes(address, client, client.unchargedBytes);
    },
    chargeReadBytes: async (client, bytes) => {
      if (client.unchargedBytes !== UNKNOWN_BODY_BYTES) return;
      await chargeBytes(addressBudgetKey(client.ip), client, bytes);
    },
    chargeTag: async (tagKey, events, bytes) => {
      if (tagQuotas.length === 0) return;
      if (!redis) {
        // In memory: every quota checked first, then charged, so a refused batch counts nowhere.
        const now = Date.now();
        let refused: (typeof tagQuotas)[number] | null = null;
        let wait = 0;
        for (const quota of tagQuotas) {
          const ms = quota.windows!.wait(tagKey, quota.unit === 'events' ? events : bytes, now);
          if (ms > wait) {
            wait = ms;
            refused = quota;
          }
        }
        if (refused) {
          const left = refused.windows!.remaining(tagKey, now);
          throw rateLimited(
            `Collector quota of ${refused.limit} ${refused.unit} per ${refused.per} for this tag exceeded`,
            refused.limit,
            new RateLimiterRes(left, wait, refused.limit - left, false),
            refused.policy,
          );
        }
        for (const quota of tagQuotas) quota.windows!.take(tagKey, quota.unit === 'events' ? events : bytes, now);
        return;
      }
      const outcomes = await Promise.allSettled(
        tagQuotas.map(({ limiter, unit }) => limiter!.consume(tagKey, unit === 'events' ? events : bytes)),
      );
      let refusal: { quota: (typeof tagQuotas)[number]; outcome: RateLimiterRes } | null = null;
      outcomes.forEach((settled, index) => {
        if (settled.status === 'fulfilled') return;
        if (!(settled.reason instanceof RateLimiterRes)) {
          logger.warn({ err: settled.reason }, 'rate limiter failed; tag quota not charged');
          return;
        }
        // The longest wait: the batch fits only once every refusing quota has room again.
        if (!refusal || settled.reason.msBeforeNext > refusal.outcome.msBeforeNext) {
          refusal = { quota: tagQuotas[index]!, outcome: settled.reason };
        }
      });
      if (!refusal) return;
      // A refused batch is not stored: give its points back everywhere (the day's budget is not
      // spent by refusals, and a smaller batch still fits what is left).
      tagQuotas.forEach(({ limiter, unit }, index) => {
        if (outcomes[index]!.status === 'fulfilled' || outcomes[index]!.reason instanceof RateLimiterRes) {
          limiter!.reward(tagKey, unit === 'events' ? events : bytes).catch(() => {});
        }
      });
      const { quota, outcome } = refusal as { quota: (typeof tagQuotas)[number]; outcome: RateLimiterRes };
      throw rateLimited(
        `Collector quota of ${quota.limit} ${quota.unit} per ${quota.per} for this tag exceeded`,
        quota.limit,
        outcome,
        quota.policy,
      );
    },
    countAuthFailure: async (client) => {
      if (!authFailureLimiter) return;
      try {
        await authFailureLimiter.consume(addressBudgetKey(client.ip), 1);
      } catch (outcome) {
        if (outcome instanceof RateLimiterRes) throw addressThrottled(outcome);
      }
    },
    close: async () => {
      if (!redis) return;
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}

const DAY_SECONDS = 24 * 60 * 60;

/**
 * Hashes (truncated) of keys that authenticated in this process within a day, at most 10,000
 * (oldest first out). Only a successful lookup adds one, so a flood cannot fill it; it decides
 * only whether a throttled address's token is worth its database read, never whether it is valid.
 */
class ProvenKeys {
  private readonly seen = new Map<string, number>();

  has(hash: string, now = Date.now()): boolean {
    const until = this.seen.get(hash.slice(0, 32));
    return until !== undefined && until > now;
  }

  add(hash: string, now = Date.now()): void {
    this.seen.delete(hash);
    if (this.seen.size >= 10_000) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
    this.seen.set(hash, now + DAY_SECONDS * 1000);
  }
}

/** Windows kept before expired ones are swept out (the keys are live tags). */
const MAX_WINDOWS = 100_000;

/**
 * Fixed windows counted in memory, synchronously (the tag quotas without Redis). A window starts
 * with the first points taken for its key and lasts `durationMs`, as rate-limiter-flexible's do.
 */
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
