import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Env } from '../env.js';
import { AppError, statusOf } from '../errors.js';
import type { Logger } from '../logger.js';
import { type AuthenticatedPartner, bearerToken } from '../services/partner/authenticate.js';
import { hashApiKey } from '../services/partner/key-hash.js';
import type { ApiKeys } from '../services/partner/keys.js';
import { errorCode, maskUrl, StartupError } from '../startup-error.js';
import { clientAddress } from './client-address.js';

/**
 * Who a call comes from, as the rate-limit policy sees it: the client address, and where the
 * `RateLimit-*` headers of a successful charge go (the HTTP response; nowhere for in-process callers).
 */
export interface RateLimitClient {
  ip: string;
  setHeader(name: string, value: string): void;
}

/** The client of an HTTP request (the socket's peer) answering on `res`. */
export function clientOf(req: IncomingMessage, res: ServerResponse): RateLimitClient {
  return {
    ip: clientIp(req),
    setHeader: (name, value) => {
      if (!res.headersSent) res.setHeader(name, value);
    },
  };
}

/**
 * The one rate-limit policy, the same for every way in (REST, /trpc with each call of a batch
 * counted, the event streams, the browser collector): see docs/decisions.md, "Security round".
 */
export interface RateLimits {
  /**
   * Authenticates `authorization`, then charges one point to the key (never before: a random key
   * creates no limiter entry). A client address with too many failed authentications in the
   * window gets 429 RATE_LIMITED (with Retry-After) without its key being looked up; every
   * failed authentication counts against it. Over the key's budget: 429 with Retry-After.
   */
  authenticate(authorization: string | string[] | undefined, client: RateLimitClient): Promise<AuthenticatedPartner>;
  /** One point of the client address's collector budget (`POST /v1/collect`, `collect.ingest`, `POST /e`). */
  limitCollector(client: RateLimitClient): Promise<void>;
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

/** The client address of a request: the socket's peer, or per TRUST_PROXY (http/client-address.ts). */
export function clientIp(req: IncomingMessage): string {
  return clientAddress(req);
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

  const make = (name: string, points: number): RateLimiterAbstract | null => {
    if (points === 0) return null;
    const memory = new RateLimiterMemory({ points, duration: env.RATE_LIMIT_WINDOW_SECONDS, keyPrefix: name });
    if (!redis) return memory;
    return new RateLimiterRedis({
      storeClient: redis,
      points,
      duration: env.RATE_LIMIT_WINDOW_SECONDS,
      keyPrefix: `${env.RATE_LIMIT_KEY_PREFIX}:${name}`,
      insuranceLimiter: memory,
    });
  };
  const apiKeyLimiter = make('key', env.RATE_LIMIT_PER_MINUTE);
  const collectLimiter = make('ip', env.COLLECT_RATE_LIMIT_PER_MINUTE);
  const authFailureLimiter = make('authfail', env.AUTH_FAILURE_LIMIT_PER_MINUTE);
  const perWindow = env.RATE_LIMIT_WINDOW_SECONDS === 60 ? 'minute' : `${env.RATE_LIMIT_WINDOW_SECONDS} s`;

  const rateLimited = (message: string, limit: number, outcome: RateLimiterRes): AppError => {
    const retryAfter = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
    return new AppError('RATE_LIMITED', `${message}; retry after ${retryAfter} s`, {
      headers: { ...limitHeaders(limit, outcome), 'Retry-After': String(retryAfter) },
    });
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

  /** 429 when the address already failed authentication AUTH_FAILURE_LIMIT_PER_MINUTE times in the window. */
  const refuseThrottledAddress = async (ip: string): Promise<void> => {
    if (!authFailureLimiter) return;
    let state: RateLimiterRes | null;
    try {
      state = await authFailureLimiter.get(ip);
    } catch (error) {
      logger.warn({ err: error }, 'rate limiter failed; authentication not throttled');
      return;
    }
    if (state && state.consumedPoints >= env.AUTH_FAILURE_LIMIT_PER_MINUTE) {
      throw rateLimited(
        `Too many failed authentications from this address (limit ${env.AUTH_FAILURE_LIMIT_PER_MINUTE} per ${perWindow})`,
        env.AUTH_FAILURE_LIMIT_PER_MINUTE,
        state,
      );
    }
  };

  const countFailure = async (ip: string): Promise<void> => {
    if (!authFailureLimiter) return;
    // Over the limit `consume` rejects: this attempt is answered 401 anyway, the next ones 429.
    await authFailureLimiter.consume(ip, 1).catch(() => {});
  };

  return {
    shared: Boolean(redis),
    authenticate: async (authorization, client) => {
      await refuseThrottledAddress(client.ip);
      let partner: AuthenticatedPartner;
      try {
        partner = await keys.authenticate(authorization);
      } catch (error) {
        if (error instanceof AppError && statusOf(error) === 401) await countFailure(client.ip);
        throw error;
      }
      if (!apiKeyLimiter) return partner;
      // Keyed by the key's id (or, for a partner without one, its hash, truncated): the key itself
      // never reaches the store.
      const budgetKey = partner.key?.id ?? hashApiKey(bearerToken(authorization) ?? '').slice(0, 32);
      await consume(apiKeyLimiter, env.RATE_LIMIT_PER_MINUTE, budgetKey, client, 'per API key');
      return partner;
    },
    limitCollector: (client) =>
      consume(collectLimiter, env.COLLECT_RATE_LIMIT_PER_MINUTE, client.ip, client, 'per client address'),
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
