import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { bearerToken, hashApiKey, isWellFormedApiKey, isWellFormedSessionToken } from '../kernel/bearer-tokens.js';
import type { Env } from '../kernel/env.js';
import { AppError, statusOf } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import { errorCode, maskUrl, StartupError } from '../kernel/startup-error.js';
import { addressBudgetKey } from './address-budget-key.js';
import type { ApiKeys } from './keys/api-keys.js';
import type { AuthenticatedPartner } from './keys/principal.js';
import { limiterMaker, limitHeaders, rateLimited, windowName } from './rate-limiters.js';
import { TagQuotas } from './tag-quotas.js';

/** Who a call comes from, as the rate-limit policy sees it. */
export interface RateLimitClient {
  ip: string;
  setHeader(name: string, value: string): void;
  /** Body bytes of the request not yet charged to the address's collector byte budget. */
  unchargedBytes: number;
}

/** `RateLimitClient.unchargedBytes` of a body whose size is known only once read. */
export const UNKNOWN_BODY_BYTES = -1;

/**
 * The one rate-limit policy, the same for every way in (REST, /trpc with each call of a batch counted, the event
 * streams, the browser collector): see docs/decisions/rate-limits-and-quotas.md.
 */
export interface RateLimits {
  /** Authenticates `authorization`, then charges one point to the key. */
  authenticate(authorization: string | string[] | undefined, client: RateLimitClient): Promise<AuthenticatedPartner>;
  /** One point of the client address's collector budget, and the request's body bytes to its byte budget. */
  limitCollector(client: RateLimitClient): Promise<void>;
  /** A body read without a declared length (chunked): its `bytes` go to the address's byte budget now. */
  chargeReadBytes(client: RateLimitClient, bytes: number): Promise<void>;
  /** The volume quotas of a live tag, charged once the tag is known live. */
  chargeTag(tagKey: string, events: number, bytes: number): Promise<void>;
  /** Counts one failed authentication that is not an API key's into the address's failure budget. */
  countAuthFailure(client: RateLimitClient): Promise<void>;
  /** True when budgets are shared through Redis. */
  readonly shared: boolean;
  close(): Promise<void>;
}

/** The partner that owns the bearer token, or 401 (features/partners/authenticate.ts, given at composition). */
export type Authenticate = (
  authorization: string | string[] | undefined,
  beforeLookup: (hash: string) => Promise<void>,
) => Promise<AuthenticatedPartner>;

/**
 * Rate limits with rate-limiter-flexible: in memory per process, or in Redis when REDIS_URL is set. If Redis stops
 * answering, an in-memory limiter of the same budget takes over, so a Redis outage never fails a request.
 */
export async function createRateLimits(
  env: Env,
  logger: Logger,
  keys: ApiKeys,
  authenticate: Authenticate,
): Promise<RateLimits> {
  const redis = env.REDIS_URL ? await connectRedis(env.REDIS_URL, logger) : undefined;
  return new RateLimitPolicy(env, logger, keys, authenticate, redis);
}

async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
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
      `Cannot reach Redis at REDIS_URL=${maskUrl(url)} (${errorCode(lastError ?? error)}): start Redis there or fix REDIS_URL`,
      { cause: error },
    );
  }
  return redis;
}

class RateLimitPolicy implements RateLimits {
  readonly shared: boolean;
  private readonly apiKeyLimiter: RateLimiterAbstract | null;
  private readonly sessionLimiter: RateLimiterAbstract | null;
  private readonly collectLimiter: RateLimiterAbstract | null;
  private readonly collectBytesLimiter: RateLimiterAbstract | null;
  private readonly authFailureLimiter: RateLimiterAbstract | null;
  private readonly keyFailureLimiter: RateLimiterAbstract | null;
  private readonly tagQuotas: TagQuotas;
  private readonly perWindow: string;
  // Keys that authenticated here lately: a throttled address still gets them looked up.
  private readonly provenKeys = new ProvenKeys();

  constructor(
    private readonly env: Env,
    private readonly logger: Logger,
    private readonly keys: ApiKeys,
    private readonly authenticateToken: Authenticate,
    private readonly redis: Redis | undefined,
  ) {
    const make = limiterMaker(env, redis);
    this.shared = Boolean(redis);
    this.apiKeyLimiter = make('key', env.RATE_LIMIT_PER_MINUTE);
    this.sessionLimiter = make('session', env.SESSION_RATE_LIMIT_PER_MINUTE);
    this.collectLimiter = make('ip', env.COLLECT_RATE_LIMIT_PER_MINUTE);
    this.collectBytesLimiter = make('ipbytes', env.COLLECT_BYTES_PER_ADDRESS_PER_MINUTE);
    this.authFailureLimiter = make('authfail', env.AUTH_FAILURE_LIMIT_PER_MINUTE);
    this.keyFailureLimiter = make('keyfail', env.AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE);
    this.tagQuotas = new TagQuotas(env, make, Boolean(redis), logger);
    this.perWindow = windowName(env);
  }

  async authenticate(
    authorization: string | string[] | undefined,
    client: RateLimitClient,
  ): Promise<AuthenticatedPartner> {
    const address = addressBudgetKey(client.ip);
    // An address over its failure budget (carrier NAT: many users, one of them failing) keeps
    // its known keys; anything else it sends is refused unread until the window ends.
    const throttled = await this.overLimit(this.authFailureLimiter, this.env.AUTH_FAILURE_LIMIT_PER_MINUTE, address);
    if (throttled && !this.knownKey(authorization)) throw this.addressThrottled(throttled);
    const { partner, lookedUp } = await this.lookUpCountingFailures(authorization, address);
    if (lookedUp !== null) this.provenKeys.add(lookedUp);
    // Keyed by the key's id (or, for a partner without one, its hash, truncated): the key itself never reaches the
    // store.
    const budgetKey = partner.key?.id ?? hashApiKey(bearerToken(authorization) ?? '').slice(0, 32);
    if (partner.session) {
      const limit = this.env.SESSION_RATE_LIMIT_PER_MINUTE;
      await this.consume(this.sessionLimiter, limit, partner.session.id, client, 'per merchant session');
    }
    const headersTo = partner.session ? null : client;
    await this.consume(this.apiKeyLimiter, this.env.RATE_LIMIT_PER_MINUTE, budgetKey, headersTo, 'per API key');
    return partner;
  }

  async limitCollector(client: RateLimitClient): Promise<void> {
    const address = addressBudgetKey(client.ip);
    await this.consume(
      this.collectLimiter,
      this.env.COLLECT_RATE_LIMIT_PER_MINUTE,
      address,
      client,
      'per client address',
    );
    // Declared bytes are refused before the body is read.
    if (client.unchargedBytes > 0) await this.chargeBytes(address, client, client.unchargedBytes);
  }

  async chargeReadBytes(client: RateLimitClient, bytes: number): Promise<void> {
    if (client.unchargedBytes !== UNKNOWN_BODY_BYTES) return;
    await this.chargeBytes(addressBudgetKey(client.ip), client, bytes);
  }

  async chargeTag(tagKey: string, events: number, bytes: number): Promise<void> {
    await this.tagQuotas.charge(tagKey, events, bytes);
  }

  async countAuthFailure(client: RateLimitClient): Promise<void> {
    if (!this.authFailureLimiter) return;
    try {
      await this.authFailureLimiter.consume(addressBudgetKey(client.ip), 1);
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) throw this.addressThrottled(outcome);
    }
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  /** The key lookup; a 401 counts against the address and the presented key. */
  private async lookUpCountingFailures(
    authorization: string | string[] | undefined,
    address: string,
  ): Promise<{ partner: AuthenticatedPartner; lookedUp: string | null }> {
    let lookedUp: string | null = null;
    try {
      const partner = await this.authenticateToken(authorization, async (hash) => {
        // Only a token that is not in the key cache gets here, before its database read.
        lookedUp = hash.slice(0, 32);
        await this.refuseFailingKey(lookedUp);
      });
      return { partner, lookedUp };
    } catch (error) {
      if (error instanceof AppError && statusOf(error) === 401) {
        await Promise.all([
          this.countFailure(this.authFailureLimiter, address),
          lookedUp === null ? undefined : this.countFailure(this.keyFailureLimiter, lookedUp),
        ]);
      }
      throw error;
    }
  }

  private async refuseFailingKey(hash: string): Promise<void> {
    const limit = this.env.AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE;
    const failing = await this.overLimit(this.keyFailureLimiter, limit, hash);
    if (failing) {
      throw rateLimited(
        `Too many failed authentications with this key (limit ${limit} per ${this.perWindow})`,
        limit,
        failing,
      );
    }
  }

  /** One point of `key`'s budget; the `RateLimit-*` headers of the answer go to `headersTo` (none: null). */
  private async consume(
    limiter: RateLimiterAbstract | null,
    limit: number,
    key: string,
    headersTo: RateLimitClient | null,
    what: string,
  ): Promise<void> {
    if (!limiter) return;
    try {
      const result = await limiter.consume(key, 1);
      if (!headersTo) return;
      for (const [name, value] of Object.entries(limitHeaders(limit, result))) headersTo.setHeader(name, value);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        // The store failed and no insurance answered: let the request through rather than fail it.
        this.logger.warn({ err: outcome }, 'rate limiter failed; request let through');
        return;
      }
      throw rateLimited(`Rate limit of ${limit} requests per ${this.perWindow} ${what} exceeded`, limit, outcome);
    }
  }

  /** The limiter's state when `key` already used all of `limit` in the window; null otherwise (or when the store failed). */
  private async overLimit(
    limiter: RateLimiterAbstract | null,
    limit: number,
    key: string,
  ): Promise<RateLimiterRes | null> {
    if (!limiter) return null;
    try {
      const state = await limiter.get(key);
      return state && state.consumedPoints >= limit ? state : null;
    } catch (error) {
      this.logger.warn({ err: error }, 'rate limiter failed; authentication not throttled');
      return null;
    }
  }

  private addressThrottled(state: RateLimiterRes): AppError {
    return rateLimited(
      `Too many failed authentications from this address (limit ${this.env.AUTH_FAILURE_LIMIT_PER_MINUTE} per ${this.perWindow})`,
      this.env.AUTH_FAILURE_LIMIT_PER_MINUTE,
      state,
    );
  }

  private async countFailure(limiter: RateLimiterAbstract | null, key: string): Promise<void> {
    if (!limiter) return;
    // Over the limit `consume` rejects: this attempt is answered 401 anyway, the next ones 429.
    await limiter.consume(key, 1).catch(() => {});
  }

  /**
   * True for a token this process knows to be a key (cached, or authenticated here lately), so that a throttled
   * address's flood of unknown tokens costs no database read while its valid keys keep working.
   */
  private knownKey(authorization: string | string[] | undefined): boolean {
    const token = bearerToken(authorization);
    if (token === null || !(isWellFormedApiKey(token) || isWellFormedSessionToken(token))) return false;
    const hash = hashApiKey(token);
    return this.keys.cache.get(hash) !== undefined || this.provenKeys.has(hash);
  }

  private async chargeBytes(address: string, client: RateLimitClient, bytes: number): Promise<void> {
    client.unchargedBytes = 0;
    if (bytes === 0 || !this.collectBytesLimiter) return;
    try {
      await this.collectBytesLimiter.consume(address, bytes);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        this.logger.warn({ err: outcome }, 'rate limiter failed; request let through');
        return;
      }
      const limit = this.env.COLLECT_BYTES_PER_ADDRESS_PER_MINUTE;
      throw rateLimited(
        `Collector byte limit of ${limit} bytes per ${this.perWindow} per client address exceeded`,
        limit,
        outcome,
      );
    }
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Hashes (truncated) of keys that authenticated in this process within a day, at most 10,000 (oldest first out). */
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
    this.seen.set(hash, now + DAY_MS);
  }
}
