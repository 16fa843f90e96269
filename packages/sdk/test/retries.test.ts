import { delay, HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  type APIError,
  APIUserAbortError,
  InternalServerError,
  RateLimitError,
} from '../src/index.js';
import { BASE_URL, makeClient, reply, sequence, server, UUID_V4, useMsw, useRecordedSleep } from './helpers.js';

useMsw();
const delays = useRecordedSleep();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const ok = () => reply({ merchantId: MERCHANT_ID }, { status: 201 });
const fail =
  (status: number, headers: Record<string, string> = {}) =>
  () =>
    reply({ message: `failed with ${status}`, code: 'SERVICE_UNAVAILABLE' }, { status, headers });

describe('retries', () => {
  it.each([408, 429, 500, 502, 503, 504])('retries %i and then succeeds', async (status) => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [fail(status), fail(status), ok]);
    server.use(handler);
    await expect(makeClient().merchants.create({ name: 'a' })).resolves.toEqual({ merchantId: MERCHANT_ID });
    expect(seen).toHaveLength(3);
    expect(delays).toHaveLength(2);
  });

  it.each([400, 401, 403, 404, 409, 422])('does not retry %i', async (status) => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [fail(status), ok]);
    server.use(handler);
    await expect(makeClient().merchants.create({ name: 'a' })).rejects.toMatchObject({ status });
    expect(seen).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('gives up after maxRetries (default 2) with the last error', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/merchant', [fail(500), fail(502), fail(503)]);
    server.use(handler);
    const error = await makeClient()
      .merchants.list()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as APIError).status).toBe(503);
    expect(seen).toHaveLength(3);
  });

  it('honours maxRetries per client and per call', async () => {
    const first = sequence('get', '/v1/partners/merchant', [fail(500)]);
    server.use(first.handler);
    await expect(makeClient({ maxRetries: 4 }).merchants.list()).rejects.toBeInstanceOf(InternalServerError);
    expect(first.seen).toHaveLength(5);
    const second = sequence('get', '/v1/partners/merchant', [fail(500)]);
    server.use(second.handler);
    await expect(makeClient({ maxRetries: 4 }).merchants.list({}, { maxRetries: 0 })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(second.seen).toHaveLength(1);
  });

  it('backs off exponentially with jitter: min(0.5 s * 2^n, 8 s) minus up to 25%', async () => {
    const { handler } = sequence('get', '/v1/partners/merchant', [fail(500)]);
    server.use(handler);
    await expect(makeClient({ maxRetries: 6 }).merchants.list()).rejects.toBeInstanceOf(InternalServerError);
    const bases = [500, 1000, 2000, 4000, 8000, 8000];
    expect(delays).toHaveLength(6);
    delays.forEach((ms, i) => {
      const base = bases[i] as number;
      expect(ms).toBeGreaterThanOrEqual(base * 0.75);
      expect(ms).toBeLessThanOrEqual(base);
    });
  });

  it('honours Retry-After in seconds', async () => {
    const { handler } = sequence('post', '/v1/partners/merchant', [fail(429, { 'retry-after': '3' }), ok]);
    server.use(handler);
    await makeClient().merchants.create({ name: 'a' });
    expect(delays).toEqual([3000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const at = new Date(Date.now() + 5_000).toUTCString();
    const { handler } = sequence('post', '/v1/partners/merchant', [fail(503, { 'retry-after': at }), ok]);
    server.use(handler);
    await makeClient().merchants.create({ name: 'a' });
    expect(delays).toHaveLength(1);
    // HTTP dates have whole seconds: between 4 and 5 s from now.
    expect(delays[0]).toBeGreaterThan(3_500);
    expect(delays[0]).toBeLessThanOrEqual(5_000);
  });

  it('honours retry-after-ms, ahead of Retry-After', async () => {
    const { handler } = sequence('post', '/v1/partners/merchant', [
      fail(429, { 'retry-after-ms': '1234', 'retry-after': '9' }),
      ok,
    ]);
    server.use(handler);
    await makeClient().merchants.create({ name: 'a' });
    expect(delays).toEqual([1234]);
  });

  it('ignores a Retry-After beyond 60 s and uses the backoff instead', async () => {
    const { handler } = sequence('post', '/v1/partners/merchant', [fail(429, { 'retry-after': '120' }), ok]);
    server.use(handler);
    await makeClient().merchants.create({ name: 'a' });
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(375);
    expect(delays[0]).toBeLessThanOrEqual(500);
  });

  it('exposes the requested delay on RateLimitError', async () => {
    const { handler } = sequence('post', '/v1/partners/merchant', [fail(429, { 'retry-after': '120' })]);
    server.use(handler);
    const error = await makeClient({ maxRetries: 0 })
      .merchants.create({ name: 'a' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
  });

  it('sends one Idempotency-Key, unchanged, on every attempt of a POST; a new one per call', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [fail(503), fail(500), ok, fail(503), ok]);
    server.use(handler);
    const client = makeClient();
    await client.merchants.create({ name: 'a' });
    await client.merchants.create({ name: 'b' });
    const keys = seen.map((r) => r.headers.get('idempotency-key'));
    expect(keys).toHaveLength(5);
    expect(keys[0]).toMatch(UUID_V4);
    expect(new Set(keys.slice(0, 3)).size).toBe(1);
    expect(keys[3]).toMatch(UUID_V4);
    expect(keys[3]).toBe(keys[4]);
    expect(keys[3]).not.toBe(keys[0]);
  });

  it('uses the caller-supplied idempotency key on every attempt', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/tag/verify', [fail(502), () => reply({ verified: true })]);
    server.use(handler);
    await makeClient().tags.verify({ tagId: 't', subdomain: 'a.b.com' }, { idempotencyKey: 'order-42' });
    expect(seen.map((r) => r.headers.get('idempotency-key'))).toEqual(['order-42', 'order-42']);
    expect(seen.map((r) => r.body)).toEqual([
      { tagId: 't', subdomain: 'a.b.com' },
      { tagId: 't', subdomain: 'a.b.com' },
    ]);
  });

  it('retries network errors and then throws APIConnectionError', async () => {
    let calls = 0;
    server.use(
      http.post(`${BASE_URL}/v1/partners/merchant`, () => {
        calls++;
        return HttpResponse.error();
      }),
    );
    const error = await makeClient()
      .merchants.create({ name: 'a' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APIConnectionTimeoutError);
    expect((error as Error).message).toMatch(/^Connection error/);
    expect(calls).toBe(3);
  });

  it('recovers from a network error on retry', async () => {
    let calls = 0;
    server.use(
      http.get(`${BASE_URL}/v1/partners/merchant`, () => {
        calls++;
        return calls === 1 ? HttpResponse.error() : reply({ merchants: [] });
      }),
    );
    const page = await makeClient().merchants.list();
    expect(page.data).toEqual([]);
    expect(calls).toBe(2);
  });

  it('times out (APIConnectionTimeoutError) and retries timeouts', async () => {
    let calls = 0;
    server.use(
      http.get(`${BASE_URL}/v1/partners/merchant`, async () => {
        calls++;
        await delay(2_000);
        return reply({ merchants: [] });
      }),
    );
    const started = Date.now();
    const error = await makeClient({ timeout: 50 })
      .merchants.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as Error).message).toBe('Request timed out after 50 ms.');
    expect(calls).toBe(3);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('a timed-out first attempt is followed by a successful retry; per-call timeout wins', async () => {
    let calls = 0;
    server.use(
      http.get(`${BASE_URL}/v1/partners/merchant`, async () => {
        calls++;
        if (calls === 1) await delay(2_000);
        return reply({ merchants: [] });
      }),
    );
    const page = await makeClient({ timeout: 60_000 }).merchants.list({}, { timeout: 50 });
    expect(page.data).toEqual([]);
    expect(calls).toBe(2);
  });

  it('times out while the body is still streaming', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/merchant`, () => {
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"merchants": ['));
            // never closes
          },
        });
        return new HttpResponse(stream, { status: 200, headers: { 'content-type': 'application/json' } });
      }),
    );
    await expect(makeClient({ timeout: 100, maxRetries: 0 }).merchants.list()).rejects.toBeInstanceOf(
      APIConnectionTimeoutError,
    );
  });
});

describe('abort', () => {
  it('an abort during the backoff wait rejects promptly with APIUserAbortError and sends nothing more', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [fail(503, { 'retry-after': '30' }), ok]);
    server.use(handler);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const error = await makeClient({ sleep: undefined }) // the real, timer-based sleep

      .merchants.create({ name: 'a' }, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(2_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toHaveLength(1);
  });

  it('an abort during a request rejects with APIUserAbortError and is never retried', async () => {
    let calls = 0;
    server.use(
      http.get(`${BASE_URL}/v1/partners/merchant`, async () => {
        calls++;
        await delay(2_000);
        return reply({ merchants: [] });
      }),
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await makeClient()
      .merchants.list({}, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(error).not.toBeInstanceOf(APIConnectionError);
    expect(calls).toBe(1);
    expect(delays).toEqual([]);
  });

  it('an already-aborted signal sends no request', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [ok]);
    server.use(handler);
    await expect(makeClient().merchants.create({ name: 'a' }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      APIUserAbortError,
    );
    expect(seen).toHaveLength(0);
  });
});
