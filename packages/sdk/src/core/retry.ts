import { APIUserAbortError } from './errors.js';

/** First backoff delay: 0.5 s. */
const INITIAL_RETRY_DELAY_MS = 500;
/** Backoff delays never exceed 8 s. */
const MAX_RETRY_DELAY_MS = 8_000;
/** A server-sent `retry-after-ms` / `Retry-After` is honoured only when between 0 and 60 s. */
const MAX_RETRY_AFTER_MS = 60_000;

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** Statuses retried: 408, 429, 500, 502, 503, 504. Never 400, 401, 403, 404, 409, 422. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * Exponential backoff with jitter, before retry number `retriesSoFar + 1`:
 * `min(500 ms * 2^retriesSoFar, 8000 ms) * (1 - 0.25 * random())`, i.e. 0.5 s, 1 s, 2 s, 4 s, 8 s, 8 s...
 * each shortened by up to 25% at random so that clients do not retry in lockstep.
 */
export function backoffDelayMs(retriesSoFar: number, random: () => number = Math.random): number {
  const base = Math.min(INITIAL_RETRY_DELAY_MS * 2 ** retriesSoFar, MAX_RETRY_DELAY_MS);
  return Math.round(base * (1 - 0.25 * random()));
}

/**
 * The delay the server asked for, in ms: `retry-after-ms` (milliseconds) first, then `Retry-After`
 * as seconds or as an HTTP date. `null` when absent or unparseable. Not capped.
 */
export function parseRetryAfterMs(headers: Headers, now: number = Date.now()): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : null;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * The wait before the next retry: the server's `retry-after-ms`/`Retry-After` when it is between 0 and
 * 60 s, otherwise (absent, unparseable or longer than 60 s) the jittered exponential backoff.
 */
export function retryDelayMs(retriesSoFar: number, headers?: Headers): number {
  const requested = headers ? parseRetryAfterMs(headers) : null;
  if (requested !== null && requested <= MAX_RETRY_AFTER_MS) return requested;
  return backoffDelayMs(retriesSoFar);
}

/** Waits `ms`; must reject (promptly) when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real sleep: a timer that an abort clears at once, rejecting with {@link APIUserAbortError}. */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new APIUserAbortError(undefined, { cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError(undefined, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
