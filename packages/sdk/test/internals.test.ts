import { describe, expect, it } from 'vitest';
import { parseErrorBody } from '../src/core/make-error.js';
import { nextCursorFromLink } from '../src/core/pagination.js';
import { backoffDelayMs, isRetryableStatus, parseRetryAfterMs, retryDelayMs } from '../src/core/retry.js';
import { makeIdempotencyKey } from '../src/internal/idempotency.js';
import { buildQuery } from '../src/internal/query.js';
import { UUID_V4 } from './helpers.js';

describe('backoff formula', () => {
  it('is min(500 * 2^n, 8000) ms, shortened by up to 25% of jitter', () => {
    expect([0, 1, 2, 3, 4, 5, 10].map((n) => backoffDelayMs(n, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect([0, 1, 4].map((n) => backoffDelayMs(n, () => 1))).toEqual([375, 750, 6000]);
    expect(backoffDelayMs(1, () => 0.5)).toBe(875);
  });

  it('retries exactly 408, 429, 500, 502, 503 and 504', () => {
    const retried = Array.from({ length: 200 }, (_, i) => i + 400).filter(isRetryableStatus);
    expect(retried).toEqual([408, 429, 500, 502, 503, 504]);
  });
});

describe('retry-after parsing', () => {
  const h = (init: Record<string, string>) => new Headers(init);
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads retry-after-ms, Retry-After seconds and HTTP dates', () => {
    expect(parseRetryAfterMs(h({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(parseRetryAfterMs(h({ 'retry-after': '2' }), now)).toBe(2000);
    expect(parseRetryAfterMs(h({ 'retry-after': '1.5' }), now)).toBe(1500);
    expect(parseRetryAfterMs(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }), now)).toBe(10_000);
    expect(parseRetryAfterMs(h({ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }), now)).toBe(0);
  });

  it('ignores garbage and negatives', () => {
    expect(parseRetryAfterMs(h({}), now)).toBeNull();
    expect(parseRetryAfterMs(h({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(parseRetryAfterMs(h({ 'retry-after': '-3' }), now)).toBeNull();
    expect(parseRetryAfterMs(h({ 'retry-after-ms': 'x', 'retry-after': '1' }), now)).toBe(1000);
  });

  it('uses the server delay only up to 60 s', () => {
    expect(retryDelayMs(0, h({ 'retry-after': '60' }))).toBe(60_000);
    expect(retryDelayMs(0, h({ 'retry-after': '0' }))).toBe(0);
    const fallback = retryDelayMs(0, h({ 'retry-after': '61' }));
    expect(fallback).toBeGreaterThanOrEqual(375);
    expect(fallback).toBeLessThanOrEqual(500);
  });
});

describe('error body parsing', () => {
  it('reads { message, code }', () => {
    expect(parseErrorBody(404, '{"message":"Merchant not found","code":"MERCHANT_NOT_FOUND"}')).toEqual({
      body: { message: 'Merchant not found', code: 'MERCHANT_NOT_FOUND' },
      message: 'Merchant not found',
      code: 'MERCHANT_NOT_FOUND',
    });
  });

  it('reads { statusCode, message, error } and array messages', () => {
    expect(
      parseErrorBody(401, '{"statusCode":401,"message":"Bearer token is required","error":"Unauthorized"}'),
    ).toMatchObject({
      message: 'Bearer token is required',
      code: 'UNAUTHORIZED',
    });
    expect(parseErrorBody(400, '{"statusCode":400,"message":["a","b"],"error":"Bad Request"}')).toMatchObject({
      message: 'a; b',
      code: 'BAD_REQUEST',
    });
  });

  it('keeps non-JSON and non-object bodies as text', () => {
    expect(parseErrorBody(500, 'Internal Server Error\n')).toEqual({
      body: 'Internal Server Error\n',
      message: 'Internal Server Error',
      code: null,
    });
    expect(parseErrorBody(500, '"oops"')).toEqual({ body: 'oops', message: '"oops"', code: null });
    expect(parseErrorBody(500, '')).toEqual({ body: '', message: '500 status code (no body)', code: null });
  });
});

describe('query building', () => {
  it('omits undefined, null and empty arrays; joins arrays; dates to ISO', () => {
    const q = buildQuery({
      a: undefined,
      b: null,
      c: [],
      d: ['x', ' y ', ''],
      e: new Date(Date.UTC(2026, 0, 2)),
      f: 0,
      g: 'plain',
    });
    expect(q.toString()).toBe('d=x%2Cy&e=2026-01-02T00%3A00%3A00.000Z&f=0&g=plain');
  });
});

describe('idempotency keys', () => {
  it('are fresh UUID v4 values', () => {
    const keys = Array.from({ length: 50 }, makeIdempotencyKey);
    for (const key of keys) expect(key).toMatch(UUID_V4);
    expect(new Set(keys).size).toBe(50);
  });

  it('fall back to getRandomValues where randomUUID is missing', () => {
    const { crypto } = globalThis;
    Object.defineProperty(globalThis, 'crypto', {
      value: { getRandomValues: crypto.getRandomValues.bind(crypto) },
      configurable: true,
    });
    try {
      expect(makeIdempotencyKey()).toMatch(UUID_V4);
    } finally {
      Object.defineProperty(globalThis, 'crypto', { value: crypto, configurable: true });
    }
  });
});

describe('nextCursorFromLink', () => {
  it('reads the cursor of the rel="next" link, whatever else the header holds', () => {
    const next = '</v1/partners/events?merchantId=m&events=A%2CB&cursor=abc.def>; rel="next"';
    expect(nextCursorFromLink(next)).toBe('abc.def');
    expect(nextCursorFromLink(`</v1/x?cursor=p>; rel="prev", ${next}`)).toBe('abc.def');
    expect(nextCursorFromLink('<https://api.test/v1/x?cursor=q>; title="n"; rel=next')).toBe('q');
    expect(nextCursorFromLink('</v1/x?cursor=r>; rel="next last"')).toBe('r');
    expect(nextCursorFromLink('</v1/x?cursor=r>; REL="Next"')).toBe('r');
  });

  it('gives null without a next link or a cursor in it', () => {
    expect(nextCursorFromLink(null)).toBeNull();
    expect(nextCursorFromLink('')).toBeNull();
    expect(nextCursorFromLink('</v1/x?cursor=p>; rel="prev"')).toBeNull();
    expect(nextCursorFromLink('</v1/x?cursor=p>; rel="nextpage"')).toBeNull();
    expect(nextCursorFromLink('</v1/x?page=2>; rel="next"')).toBeNull();
    expect(nextCursorFromLink('not a link header')).toBeNull();
  });
});
