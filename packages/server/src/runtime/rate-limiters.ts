import type { Redis } from 'ioredis';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  type RateLimiterRes,
} from 'rate-limiter-flexible';
import type { Env } from '../kernel/env.js';
import { AppError } from '../kernel/errors.js';

/** A limiter of `points` per `duration` seconds (the window by default); null when `points` is 0 (off). */
export type MakeLimiter = (name: string, points: number, duration?: number) => RateLimiterAbstract | null;

/**
 * Limiters in memory, or in Redis under `RATE_LIMIT_KEY_PREFIX` with an in-memory limiter of the same budget as
 * insurance, so a Redis outage never fails a request.
 */
export function limiterMaker(env: Env, redis: Redis | undefined): MakeLimiter {
  return (name, points, duration = env.knobs.rateLimitWindowSeconds) => {
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
}

/** The window as messages name it: "minute", or "<n> s". */
export function windowName(env: Env): string {
  return env.knobs.rateLimitWindowSeconds === 60 ? 'minute' : `${env.knobs.rateLimitWindowSeconds} s`;
}

export function limitHeaders(limit: number, result: RateLimiterRes): Record<string, string> {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, result.remainingPoints)),
    'RateLimit-Reset': String(Math.max(0, Math.ceil(result.msBeforeNext / 1000))),
  };
}

/** `policy`: the refusing quota as a `RateLimit-Policy` item (`"name";q=limit;w=seconds`), when not the usual budget. */
export function rateLimited(message: string, limit: number, outcome: RateLimiterRes, policy?: string): AppError {
  const retryAfter = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
  const headers: Record<string, string> = { ...limitHeaders(limit, outcome), 'Retry-After': String(retryAfter) };
  if (policy) headers['RateLimit-Policy'] = policy;
  return new AppError('RATE_LIMITED', `${message}; retry after ${retryAfter} s`, { headers });
}
