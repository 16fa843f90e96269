import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { callFrom } from '../helpers/from-address.js';

/**
 * Issue 30 finding 8: the `/metrics` token compare returned early on a length mismatch (the
 * token's length leaked by timing) and its failures were never counted. Now both sides are hashed
 * and compared in constant time, and every wrong token counts into the address's failed
 * authentication budget (the one API keys use). Real sockets from chosen loopback addresses.
 */
const TOKEN = `metrics-${randomBytes(16).toString('hex')}`;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { METRICS_TOKEN: TOKEN, AUTH_FAILURE_LIMIT_PER_MINUTE: '3' } });
});
afterAll(() => server?.close());

const scrape = (from: string, token: string) =>
  callFrom(server.url, from, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });

describe('GET /metrics token', () => {
  it('only the exact token passes: a prefix, an extension, a same-length change all get 401', async () => {
    const from = '127.0.0.60';
    expect((await scrape(from, TOKEN)).status).toBe(200);
    const wrong = [TOKEN.slice(0, -1), `${TOKEN}x`, `${TOKEN.slice(0, -1)}${TOKEN.endsWith('a') ? 'b' : 'a'}`];
    for (const [i, token] of wrong.entries()) {
      const res = await callFrom(server.url, `127.0.0.${61 + i}`, 'GET', '/metrics', {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status, token).toBe(401);
      expect(res.body).toEqual({ message: expect.any(String), code: 'UNAUTHORIZED' });
    }
  });

  it('wrong tokens count into the failed-authentication budget: 429 after it, for API keys too', async () => {
    const from = '127.0.0.70';
    for (let i = 0; i < 3; i++) expect((await scrape(from, `wrong-${i}-${'z'.repeat(20)}`)).status).toBe(401);
    const refused = await scrape(from, 'wrong-again-zzzzzzzzzzzzzzzz');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: expect.stringMatching(/from this address/), code: 'RATE_LIMITED' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // One budget: the same address's unknown API keys are refused too...
    const key = await callFrom(server.url, from, 'GET', '/v1/partners/merchant', {
      headers: { authorization: `Bearer mp_live_${randomBytes(24).toString('base64url')}` },
    });
    expect(key.status).toBe(429);
    // ...while the right token still scrapes, and another address is not affected.
    expect((await scrape(from, TOKEN)).status).toBe(200);
    expect((await scrape('127.0.0.71', 'wrong-elsewhere-zzzzzzzzzzzz')).status).toBe(401);
  });
});
