import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { callFrom } from '../helpers/from-address.js';

/**
 * Findings 2 and 3 of the security round: the collector's per-address limit did not apply to
 * `/trpc/collect.ingest` (200 five times under a limit of 3; 50 x 500 events in one batched call);
 * a tRPC batch counted as one request against the per-key limit (200 calls per request); /trpc
 * charged the limit before authenticating; failed authentications were never throttled.
 * Each test speaks from its own loopback address (127.0.0.x), so budgets per address are its own.
 */
let server: TestServer;
/** transport/trpc/trpc-handler.ts MAX_TRPC_BATCH (not imported: the test must load the app in its own order). */
const MAX_TRPC_BATCH = 10;

beforeAll(async () => {
  server = await startTestServer({
    env: { RATE_LIMIT_PER_MINUTE: '5', COLLECT_RATE_LIMIT_PER_MINUTE: '3', AUTH_FAILURE_LIMIT_PER_MINUTE: '3' },
  });
});
afterAll(async () => {
  await server?.close();
});

/** One request from a loopback address of the test's own (per-address budgets are its own). */
const call = (from: string, method: string, path: string, options?: Parameters<typeof callFrom>[4]) =>
  callFrom(server.url, from, method, path, options);

const collectInput = { tagId: '00000000-0000-4000-8000-000000000000', events: [] };

/** The tRPC error code of one result of a batch answer. */
const trpcCodes = (body: Array<{ error?: { data?: { code?: string } } }>) =>
  body.map((result) => result.error?.data?.code ?? 'OK');

describe('finding 2: one collector policy for every way in', () => {
  it('REST /v1/collect and tRPC collect.ingest share the per-address budget', async () => {
    const from = '127.0.0.2';
    const first = await call(from, 'POST', '/v1/collect', { body: collectInput });
    const second = await call(from, 'POST', '/trpc/collect.ingest', { body: collectInput });
    const third = await call(from, 'POST', '/trpc/collect.ingest', { body: collectInput });
    expect([first.status, second.status, third.status]).not.toContain(429);
    const fourth = await call(from, 'POST', '/trpc/collect.ingest', { body: collectInput });
    expect(fourth.status).toBe(429);
    expect(fourth.body.error.data.code).toBe('RATE_LIMITED');
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const rest = await call(from, 'POST', '/v1/collect', { body: collectInput });
    expect(rest.status).toBe(429);
    expect(rest.body).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('each call of a batch is charged: 5 collect calls under a limit of 3 run 3', async () => {
    const path = `/trpc/${Array(5).fill('collect.ingest').join(',')}?batch=1`;
    const body = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [String(i), collectInput]));
    const res = await call('127.0.0.3', 'POST', path, { body });
    const codes = trpcCodes(res.body);
    expect(codes.filter((c) => c === 'RATE_LIMITED')).toHaveLength(2);
    expect(codes.slice(0, 3)).not.toContain('RATE_LIMITED');
  });

  it(`a batch over ${MAX_TRPC_BATCH} calls is refused before any runs`, async () => {
    const n = MAX_TRPC_BATCH + 1;
    const path = `/trpc/${Array(n).fill('collect.ingest').join(',')}?batch=1`;
    const body = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), collectInput]));
    const res = await call('127.0.0.4', 'POST', path, { body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: expect.stringContaining('at most'), code: 'VALIDATION_ERROR' });
    // Nothing was charged: the address still has its whole budget.
    const after = await call('127.0.0.4', 'POST', '/v1/collect', { body: collectInput });
    expect(after.headers['ratelimit-remaining']).toBe('2');
  });
});

describe('finding 3: the per-key limit counts calls, after authentication', () => {
  it('a tRPC batch costs one point per call: 5 calls under a limit of 5 spend the budget', async () => {
    const partner = await server.createPartner('Batch');
    const auth = { authorization: `Bearer ${partner.apiKey}` };
    const batch = (n: number) =>
      call(
        '127.0.0.5',
        'GET',
        `/trpc/${Array(n).fill('merchant.list').join(',')}?batch=1&input=${encodeURIComponent(
          JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), {}]))),
        )}`,
        { headers: auth },
      );
    const first = await batch(5);
    expect(first.status).toBe(200);
    expect(trpcCodes(first.body)).toEqual(Array(5).fill('OK'));
    // Calls executed under the limit, however they are batched (the audit: 1,000 under a limit of 5).
    let executed = 5;
    for (let i = 0; i < 3; i++) {
      const more = await batch(MAX_TRPC_BATCH);
      executed += trpcCodes(more.body).filter((c) => c === 'OK').length;
      expect(more.headers['retry-after']).toMatch(/^\d+$/);
    }
    expect(executed).toBe(5);
    const rest = await call('127.0.0.5', 'GET', '/v1/partners/merchant', { headers: auth });
    expect(rest.status).toBe(429);
  });

  it('an unknown key is refused before any budget is touched (no RateLimit headers on /trpc)', async () => {
    const res = await call('127.0.0.6', 'GET', '/trpc/merchant.list', {
      headers: { authorization: `Bearer mp_live_${'x'.repeat(32)}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });

  it('failed authentications are throttled per address on every transport (429 with Retry-After)', async () => {
    const from = '127.0.0.7';
    // Three different unknown keys: the address's budget (3), not one key's (issue 30 finding 7).
    const bad = (c: string) => ({ authorization: `Bearer mp_live_${c.repeat(32)}` });
    const statuses = [
      (await call(from, 'GET', '/v1/partners/merchant', { headers: bad('y') })).status,
      (await call(from, 'GET', '/trpc/merchant.list', { headers: bad('v') })).status,
      (await call(from, 'GET', '/v1/partners/events/stream?merchantId=x', { headers: bad('w') })).status,
    ];
    expect(statuses).toEqual([401, 401, 401]);
    for (const path of ['/v1/partners/merchant', '/trpc/merchant.list', '/v1/partners/events/stream?merchantId=x']) {
      const refused = await call(from, 'GET', path, { headers: bad('u') });
      expect(refused.status, path).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // A valid key from the same address keeps working (test/security/auth-throttle.test.ts); a
    // partner of its own: the other tests spent this partner's per-key budget.
    const neighbour = await server.createPartner('Same address');
    expect(
      (
        await call('127.0.0.9', 'GET', '/v1/partners/merchant', {
          headers: { authorization: `Bearer ${neighbour.apiKey}` },
        })
      ).status,
    ).toBe(200);
    const valid = await call(from, 'GET', '/v1/partners/merchant', {
      headers: { authorization: `Bearer ${neighbour.apiKey}` },
    });
    expect(valid.status).toBe(200);
    // Another address is not affected.
    const other = await call('127.0.0.8', 'GET', '/v1/partners/merchant', {
      headers: { authorization: `Bearer ${server.partner.apiKey}` },
    });
    expect(other.status).toBe(200);
  });
});
