import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Env } from '../env.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { hashApiKey } from '../services/partner/key-hash.js';
import { errorCode, maskUrl, StartupError } from '../startup-error.js';

export interface RateLimits {
  /**
   * Counts one request against the budget of the API key in `authorization` (call after
   * authentication). Sets `RateLimit-*` headers on `res`; over the limit throws RATE_LIMITED (429)
   * carrying `Retry-After` and the same headers.
   */
  limitApiKey(authorization: string | string[] | undefined, res: ServerResponse): Promise<void>;
  /** The same, per client IP, for the public collector endpoints (`POST /v1/collect`, the browser collector). */
  limitCollector(req: IncomingMessage, res: ServerResponse): Promise<void>;
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

/** The client address of a request: the socket's peer (no proxy header is trusted). */
export function clientIp(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/**
 * Rate limits with rate-limiter-flexible: in memory per process, or in Redis (shared by every
 * instance) when REDIS_URL is set. If Redis stops answering, an in-memory limiter of the same
 * budget takes over (the `insuranceLimiter`), so a Redis outage never fails a request.
 */
export async function createRateLimits(env: Env, logger: Logger): Promise<RateLimits> {
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

  const consume = async (
    limiter: RateLimiterAbstract | null,
    limit: number,
    key: string,
    res: ServerResponse,
    what: string,
  ): Promise<void> => {
    if (!limiter) return;
    try {
      const result = await limiter.consume(key, 1);
      for (const [name, value] of Object.entries(limitHeaders(limit, result))) res.setHeader(name, value);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        // The store failed and no insurance answered: let the request through rather than fail it.
        logger.warn({ err: outcome }, 'rate limiter failed; request let through');
        return;
      }
      const retryAfter = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `Rate limit of ${limit} requests per ${env.RATE_LIMIT_WINDOW_SECONDS === 60 ? 'minute' : `${env.RATE_LIMIT_WINDOW_SECONDS} s`} ${what} exceeded; retry after ${retryAfter} s`,
        {
          headers: { ...limitHeaders(limit, outcome), 'Retry-After': String(retryAfter) },
        },
      );
    }
  };

  return {
    shared: Boolean(redis),
    limitApiKey: (authorization, res) => {
      const raw = (Array.isArray(authorization) ? authorization[0] : authorization) ?? '';
      const token = raw.replace(/^Bearer\s+/i, '').trim();
      // Keyed by the key's hash (truncated): the key itself never reaches the store.
      return consume(apiKeyLimiter, env.RATE_LIMIT_PER_MINUTE, hashApiKey(token).slice(0, 32), res, 'per API key');
    },
    limitCollector: (req, res) =>
      consume(collectLimiter, env.COLLECT_RATE_LIMIT_PER_MINUTE, clientIp(req), res, 'per client address'),
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
