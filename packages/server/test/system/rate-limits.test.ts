import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient } from '../../../sdk/src/index.js';
import { openDatabase } from '../../src/db/client.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { startTestServer, type TestServer, uniquePartnerDomain } from '../../src/testing/index.js';
import {
  createScratchDatabase,
  postgresAnswers,
  REDIS_URL,
  redisAnswers,
  type ServerProcess,
  spawnServer,
} from '../helpers/hardening.js';

const get = (url: string, key: string) =>
  fetch(`${url}/v1/partners/merchant`, { headers: { authorization: `Bearer ${key}` } });

describe('rate limits in memory (one instance)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '5', COLLECT_RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(() => server?.close());

  it('answers 429 RATE_LIMITED with Retry-After and RateLimit-* headers past the per-key budget', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await get(server.url, server.partner.apiKey);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('5');
      remaining.push(res.headers.get('ratelimit-remaining') ?? '');
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const limited = await get(server.url, server.partner.apiKey);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ message: expect.stringContaining('Rate limit'), code: 'RATE_LIMITED' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-limit')).toBe('5');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  });

  it('keeps one budget per API key: another key is not limited', async () => {
    const other = await server.createPartner('Other');
    const res = await get(server.url, other.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('4');
  });

  it('does not count requests with an invalid key against anyone (they fail authentication first)', async () => {
    const res = await get(server.url, `mp_live_${'x'.repeat(32)}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it('limits the public collector per client address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${server.url}/v1/collect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tagId: 'not-a-tag', events: [] }),
      });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(await res.json()).toMatchObject({ code: 'RATE_LIMITED' });
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      } else {
        await res.arrayBuffer();
      }
    }
    expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
    expect(statuses[3]).toBe(429);
  });
});

describe('the SDK finishes a burst through 429s', () => {
  let server: TestServer;
  beforeAll(async () => {
    // 4 requests per 1-second window: a burst of 10 is limited and must wait for Retry-After.
    server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '4' }, knobs: { rateLimitWindowSeconds: 1 } });
  });
  afterAll(() => server?.close());

  it('surfaces no error: every call succeeds after honouring Retry-After', async () => {
    let limited = 0;
    const countingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 429) limited += 1;
      return res;
    };
    const client = new PartnerClient({
      apiKey: server.partner.apiKey,
      baseURL: server.url,
      maxRetries: 5,
      fetch: countingFetch,
    });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.merchants.create({ name: `Burst ${i}` })),
    );
    expect(results).toHaveLength(10);
    expect(new Set(results.map((r) => r.merchantId)).size).toBe(10);
    expect(limited).toBeGreaterThan(0);
    // Listed through the SDK too: a direct call here could land in a window the burst used up.
    const names: string[] = [];
    for await (const merchant of client.merchants.list({ limit: 100 })) names.push(merchant.name);
    expect(names.filter((name) => name.startsWith('Burst '))).toHaveLength(10);
  });
});

describe('rate limits shared through Redis by two server processes', async () => {
  const available = (await redisAnswers()) && (await postgresAnswers());
  let servers: ServerProcess[] = [];
  let dropDatabase = async () => {};
  let apiKey = '';

  beforeAll(async () => {
    if (!available) return;
    const scratch = await createScratchDatabase('ratelimit');
    dropDatabase = scratch.drop;
    const database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 1 });
    try {
      apiKey = (
        await onboardPartner(database.db, { name: 'Shared', domain: uniquePartnerDomain() }, 'tags.example.com')
      ).apiKey;
    } finally {
      await database.close();
    }
    const env = {
      DATABASE_URL: scratch.url,
      REDIS_URL,
      RATE_LIMIT_KEY_PREFIX: `test-rl-${randomBytes(6).toString('hex')}`,
      RATE_LIMIT_PER_MINUTE: '6',
    };
    servers = await Promise.all([spawnServer(env), spawnServer(env)]);
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) s.kill();
    await Promise.all(servers.map((s) => s.exited));
    await dropDatabase();
  });

  it.skipIf(!available)('spends one budget across both instances', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const seen: Array<{ status: number; remaining: string | null }> = [];
    for (let i = 0; i < 8; i++) {
      const res = await get((i % 2 === 0 ? a : b).url, apiKey);
      await res.arrayBuffer();
      seen.push({ status: res.status, remaining: res.headers.get('ratelimit-remaining') });
    }
    expect(seen.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(seen.slice(0, 6).map((s) => s.remaining)).toEqual(['5', '4', '3', '2', '1', '0']);
  });
});
