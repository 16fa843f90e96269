import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { callFrom } from '../helpers/from-address.js';

/**
 * Issue 30 finding 7: failed authentications from one address locked out every key from it
 * (carrier NAT: one user's bad key stopped everyone's valid ones). Now the failing key material is
 * throttled (by the hash of the presented key) and an address's flood of unknown keys is refused
 * unread, while the keys this process knows keep working. Real sockets from chosen loopback addresses.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: { AUTH_FAILURE_LIMIT_PER_MINUTE: '3', AUTH_FAILURE_LIMIT_PER_KEY_PER_MINUTE: '2' },
  });
});
afterAll(() => server?.close());

const randomKey = () => `mp_live_${randomBytes(24).toString('base64url')}`;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const merchants = (from: string, key: string) =>
  callFrom(server.url, from, 'GET', '/v1/partners/merchant', { headers: bearer(key) });

describe('an address throttled for failures keeps its valid keys', () => {
  it('a valid key keeps 200 on every transport while the same address gets 429 for bad keys', async () => {
    const from = '127.0.0.40';
    expect((await merchants(from, server.partner.apiKey)).status).toBe(200);
    // Three unknown keys: the address's failure budget.
    for (let i = 0; i < 3; i++) expect((await merchants(from, randomKey())).status).toBe(401);
    const flood = await merchants(from, randomKey());
    expect(flood.status).toBe(429);
    expect(flood.body).toEqual({ message: expect.stringMatching(/from this address/), code: 'RATE_LIMITED' });
    expect(Number(flood.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Malformed tokens too (they never cost a lookup, but are no key).
    expect((await merchants(from, 'not-a-key')).status).toBe(429);

    for (let i = 0; i < 3; i++) expect((await merchants(from, server.partner.apiKey)).status).toBe(200);
    const trpc = await callFrom(server.url, from, 'GET', `/trpc/merchant.list?input=${encodeURIComponent('{}')}`, {
      headers: bearer(server.partner.apiKey),
    });
    expect(trpc.status).toBe(200);
  });

  it('a valid key whose cached entry was dropped (a key change anywhere) is still looked up for a throttled address', async () => {
    const from = '127.0.0.41';
    const other = await server.createPartner('Throttled neighbour');
    expect((await merchants('127.0.0.49', other.apiKey)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await merchants(from, randomKey())).status).toBe(401);
    expect((await merchants(from, randomKey())).status).toBe(429);
    // Any key or partner change empties the key cache (what its NOTIFY does).
    server.app.deps.keys.cache.invalidate();
    expect((await merchants(from, other.apiKey)).status).toBe(200);
    // A key this process never saw authenticate waits for the window like any unknown token.
    const unseen = await server.createPartner('Never seen here');
    expect((await merchants(from, unseen.apiKey)).status).toBe(429);
  });
});

describe('the failing key material is throttled whatever the address', () => {
  it('one bad key from many addresses: 401 up to its budget, then 429 for that key only', async () => {
    const bad = randomKey();
    expect((await merchants('127.0.0.50', bad)).status).toBe(401);
    expect((await merchants('127.0.0.51', bad)).status).toBe(401);
    const refused = await merchants('127.0.0.52', bad);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: expect.stringMatching(/with this key/), code: 'RATE_LIMITED' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The addresses are not locked: another bad key is answered 401, a valid key 200.
    expect((await merchants('127.0.0.52', randomKey())).status).toBe(401);
    expect((await merchants('127.0.0.52', server.partner.apiKey)).status).toBe(200);
  });
});
