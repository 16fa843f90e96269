import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collectorHostOf, postEvents, preverifiedTag, type RawResponse, rawRequest } from '../helpers/collector.js';
import { REDIS_URL, redisAnswers } from '../helpers/hardening.js';
import { parseMetrics } from '../helpers/prometheus.js';

/**
 * Issue 30 finding 6: the public collectors had no volume quota (one address could send 6,000 x
 * 1 MB a minute into any live tag) and every IPv6 /128 had a budget of its own. Real HTTP, the
 * real database. TRUST_PROXY=1 (the test client is the loopback "balancer") lets each request say
 * its client address in X-Forwarded-For, so per-address budgets are the test's to choose.
 */

const METRICS_TOKEN = `quota-metrics-${randomBytes(8).toString('hex')}`;
let counter = 0;
/** A fresh documentation address per call: per-address budgets stay out of the per-tag tests. */
const freshAddress = () => `198.51.100.${(counter++ % 250) + 1}`;

function collect(server: TestServer, tagId: string, events: unknown[], from = freshAddress()): Promise<RawResponse> {
  return rawRequest(server.url, {
    method: 'POST',
    path: '/v1/collect',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ tagId, events }),
  });
}

const pageViews = (n: number) => Array.from({ length: n }, () => ({ event_name: 'PageView' }));

function expectQuotaRefusal(res: RawResponse, message: RegExp): void {
  expect(res.status, res.text).toBe(429);
  expect(res.json).toEqual({ message: expect.stringMatching(message), code: 'RATE_LIMITED' });
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

describe('per-tag quotas per window (events, stored bytes) and per address (requests, body bytes)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        TRUST_PROXY: '1',
        COLLECT_RATE_LIMIT_PER_MINUTE: '3',
        COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '40000',
        COLLECT_TAG_EVENTS_PER_MINUTE: '10',
        COLLECT_TAG_BYTES_PER_MINUTE: '20000',
        METRICS_TOKEN,
      },
    });
  });
  afterAll(() => server?.close());

  it('a tag over its events per window gets 429 + Retry-After on every way in; another tag keeps working', async () => {
    const [busy, other] = await Promise.all([preverifiedTag(server), preverifiedTag(server)]);
    const first = await collect(server, busy.tagId, pageViews(6));
    expect(first.status, first.text).toBe(202);
    const refused = await collect(server, busy.tagId, pageViews(5));
    expectQuotaRefusal(refused, /10 events per .* for this tag/);
    // The refusing quota is named (IETF RateLimit-Policy form).
    expect(refused.headers['ratelimit-policy']).toBe('"tag-events";q=10;w=60');
    // The refused batch was not counted: 4 more still fit (6 + 4 = 10).
    expect((await collect(server, busy.tagId, pageViews(4))).status).toBe(202);
    // The collector host's /e is charged to the same tag.
    const host = await collectorHostOf(server, busy);
    const viaE = await postEvents(
      server.url,
      host,
      { tagId: busy.tagId, events: pageViews(1) },
      { 'x-forwarded-for': freshAddress() },
    );
    expectQuotaRefusal(viaE, /for this tag/);
    const trpc = await rawRequest(server.url, {
      method: 'POST',
      path: '/trpc/collect.ingest',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': freshAddress() },
      body: JSON.stringify({ tagId: busy.tagId, events: pageViews(1) }),
    });
    expect(trpc.status).toBe(429);
    expect(trpc.json.error.data.code).toBe('RATE_LIMITED');
    expect((await collect(server, other.tagId, pageViews(10))).status).toBe(202);
    // The three refusals (REST, /e, tRPC) are counted as the tag scope, not the address.
    const scrape = await rawRequest(server.url, {
      path: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const metrics = parseMetrics(scrape.text);
    expect(metrics.value('partner_tags_rate_limit_rejections_total', { scope: 'tag' })).toBe(3);
    expect(metrics.value('partner_tags_rate_limit_rejections_total', { scope: 'address' })).toBe(0);
  });

  it('a tag over its stored bytes per window gets 429; another tag keeps working', async () => {
    const [busy, other] = await Promise.all([preverifiedTag(server), preverifiedTag(server)]);
    const blob = (bytes: number) => [{ event_name: 'Blob', data: { pad: 'x'.repeat(bytes) } }];
    expect((await collect(server, busy.tagId, blob(15_000))).status).toBe(202);
    expectQuotaRefusal(await collect(server, busy.tagId, blob(8_000)), /20000 bytes per .* for this tag/);
    expect((await collect(server, busy.tagId, blob(3_000))).status).toBe(202);
    expect((await collect(server, other.tagId, blob(15_000))).status).toBe(202);
  });

  it('two IPv6 addresses in one /64 share a budget; the next /64 has its own; IPv4-mapped is IPv4', async () => {
    const tag = await preverifiedTag(server);
    const statuses = async (from: string[]) => {
      const out: number[] = [];
      for (const address of from) out.push((await collect(server, tag.tagId, pageViews(1), address)).status);
      return out;
    };
    // Budget: 3 requests per address. Four /128s of one /64 are one address.
    expect(
      await statuses(['2001:db8:30:6::a', '2001:db8:30:6:ffff:1:2:3', '2001:db8:30:6::b', '2001:db8:30:6::c']),
    ).toEqual([202, 202, 202, 429]);
    expect(await statuses(['2001:db8:30:7::a'])).toEqual([202]);
    expect(await statuses(['::ffff:203.0.113.66', '203.0.113.66', '::ffff:cb00:7142', '203.0.113.66'])).toEqual([
      202, 202, 202, 429,
    ]);
  });

  it('an address over its body bytes per window gets 429 (within its request budget); another address does not', async () => {
    // One tag per request: the tags' own byte quota (20,000) stays out of it.
    const tags = await Promise.all([preverifiedTag(server), preverifiedTag(server), preverifiedTag(server)]);
    const big = [{ event_name: 'Blob', data: { pad: 'y'.repeat(15_000) } }];
    const from = '2001:db8:77::1';
    expect((await collect(server, tags[0]!.tagId, big, from)).status).toBe(202);
    expect((await collect(server, tags[1]!.tagId, big, '2001:db8:77::2')).status).toBe(202);
    // 45 KB from the /64 against 40,000 bytes: refused on its third request (its request budget is 3).
    expectQuotaRefusal(await collect(server, tags[2]!.tagId, big, from), /40000 bytes per .* per client address/);
    // tRPC's collect.ingest with a chunked body (no Content-Length) is charged its size as well
    // (the body's; padded with whitespace so the tag's stored bytes stay small).
    const trpc = (address: string) =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/trpc/collect.ingest',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({ tagId: tags[1]!.tagId, events: pageViews(1) }) + ' '.repeat(25_000),
      });
    const first = await trpc('2001:db8:7a::1');
    expect(first.status, first.text).toBe(200);
    const over = await trpc('2001:db8:7a::2');
    expect(over.status).toBe(429);
    expect(over.json.error.message).toMatch(/40000 bytes per .* per client address/);
    expect((await collect(server, tags[2]!.tagId, big, '2001:db8:78::1')).status).toBe(202);
    // A declared Content-Length over what is left is refused as announced.
    const declared = JSON.stringify({
      tagId: tags[2]!.tagId,
      events: [{ event_name: 'Blob', data: 'z'.repeat(45_000) }],
    });
    const refused = await rawRequest(server.url, {
      method: 'POST',
      path: '/v1/collect',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(declared)),
        'x-forwarded-for': '2001:db8:79::1',
      },
      body: declared,
    });
    expectQuotaRefusal(refused, /per client address/);
  });
});

describe('per-tag daily cap', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { COLLECT_TAG_EVENTS_PER_MINUTE: '0', COLLECT_TAG_EVENTS_PER_DAY: '8', COLLECT_TAG_BYTES_PER_DAY: '0' },
    });
  });
  afterAll(() => server?.close());

  it('past the day cap: 429 with a Retry-After of up to a day; another tag keeps working', async () => {
    const [busy, other] = await Promise.all([preverifiedTag(server), preverifiedTag(server)]);
    expect((await collect(server, busy.tagId, pageViews(8))).status).toBe(202);
    const refused = await collect(server, busy.tagId, pageViews(1));
    expectQuotaRefusal(refused, /8 events per day for this tag/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(86_000);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(86_400);
    expect((await collect(server, other.tagId, pageViews(8))).status).toBe(202);
  });
});

describe('per-tag quotas through Redis (REDIS_URL)', async () => {
  const available = await redisAnswers();
  const prefix = `test-quota-${randomBytes(6).toString('hex')}`;
  let server: TestServer;
  let redis: Redis;
  beforeAll(async () => {
    if (!available) return;
    redis = new Redis(REDIS_URL);
    server = await startTestServer({
      env: { REDIS_URL, RATE_LIMIT_KEY_PREFIX: prefix, COLLECT_TAG_EVENTS_PER_MINUTE: '3' },
    });
  });
  afterAll(async () => {
    await server?.close();
    if (redis) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it.skipIf(!available)('the tag budget is kept in Redis and refuses past it', async () => {
    const tag = await preverifiedTag(server);
    expect((await collect(server, tag.tagId, pageViews(2))).status).toBe(202);
    expectQuotaRefusal(await collect(server, tag.tagId, pageViews(2)), /3 events per .* for this tag/);
    // The refused batch's points were given back: one more event still fits.
    expect((await collect(server, tag.tagId, pageViews(1))).status).toBe(202);
    expectQuotaRefusal(await collect(server, tag.tagId, pageViews(1)), /3 events per .* for this tag/);
    expect(await redis.keys(`${prefix}:tagev:*`)).toHaveLength(1);
  });
});
