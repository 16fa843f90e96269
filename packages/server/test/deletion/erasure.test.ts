import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { type Api, api } from '../helpers/api.js';
import { collectorHostOf, postEvents } from '../helpers/collector.js';
import { collectOk, type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';

// Visitor erasure through the real transport: POST /v1/partners/erasures, the app's own job (a grace of
// DB_STATEMENT_TIMEOUT + 0.5 s, then batches), the erasure.completed webhook to a real receiver, the
// statistics answering without the visitor, suppression at the collector, and the muid= filter.

let server: TestServer;
let receiver: TestWebhookReceiver;
let client: Api;
let secret: string;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      DB_STATEMENT_TIMEOUT: '1000',
      WEBHOOK_DELIVERY: 'on',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms',
    },
    knobs: { webhookPollMs: 50 },
  });
  receiver = await startWebhookReceiver();
  client = api(server, server.partner.apiKey);
  const hook = await client.post('/v1/partners/webhooks', { url: receiver.url, events: ['erasure.completed'] });
  expect(hook.status).toBe(201);
  secret = hook.body.secret;
}, 60_000);
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const DAY = '2026-11-20';
const visitorEvents = (muid: string, prefix: string) =>
  ['10:01', '10:20', '11:05'].flatMap((hm, i) => [
    {
      id: `${prefix}-${muid}-pv${i}`,
      muid,
      event_name: 'PageView',
      event_time: `${DAY}T${hm}:00Z`,
      data: { path: `/p${i}` },
    },
    {
      id: `${prefix}-${muid}-buy${i}`,
      muid,
      event_name: 'Purchase',
      event_time: `${DAY}T${hm}:30Z`,
      data: { value: 5, currency: 'EUR' },
    },
  ]);

async function shopWith(muids: string[], prefix: string): Promise<GeneratedTag> {
  const tag = await preverifiedTag(server);
  await collectOk(
    server,
    tag.tagId,
    muids.flatMap((muid) => visitorEvents(muid, prefix)),
  );
  return tag;
}

const total = async (merchantId: string, muid?: string) => {
  const res = await client.get(
    `/v1/partners/events?merchantId=${merchantId}&limit=1${muid ? `&muid=${encodeURIComponent(muid)}` : ''}`,
  );
  expect(res.status).toBe(200);
  return res.body.pagination.totalItems as number;
};

const summary = async (merchantId: string) => {
  const res = await client.get(`/v1/partners/stats/summary?merchantId=${merchantId}&startDate=${DAY}&endDate=${DAY}`);
  expect(res.status).toBe(200);
  return res.body;
};

/** The erasure.completed webhooks received so far, verified with the endpoint's secret. */
function completedWebhooks(): Array<{ type: string; data: Record<string, unknown> }> {
  const wh = new Webhook(secret);
  return receiver.received.map(
    (r) => wh.verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> },
  );
}

async function until<T>(read: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('POST /v1/partners/erasures', () => {
  it("erases one merchant's visitor: the job, the statistics, the webhook, suppression at the collector", async () => {
    const shop = await shopWith(['visitor-1', 'visitor-2', 'visitor-3'], 'a');
    const other = await shopWith(['visitor-1'], 'a');
    const before = await summary(shop.merchantId);
    expect(before.totals).toMatchObject({ events: 18, visitors: 3 });

    const key = { 'idempotency-key': `erase-${shop.merchantId}` };
    const res = await client.post(
      '/v1/partners/erasures',
      { muid: 'visitor-1', merchantId: shop.merchantId, suppress: true },
      key,
    );
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.any(String),
      muid: 'visitor-1',
      merchantId: shop.merchantId,
      suppress: true,
      status: 'pending',
      eventsDeleted: 0,
      createdAt: expect.any(String),
      completedAt: null,
    });
    // Idempotency-Key: the same request answers the same erasure; another body with it is 409.
    const again = await client.post(
      '/v1/partners/erasures',
      { muid: 'visitor-1', merchantId: shop.merchantId, suppress: true },
      key,
    );
    expect([again.status, again.headers.get('idempotent-replayed'), again.body]).toEqual([202, 'true', res.body]);
    const reused = await client.post('/v1/partners/erasures', { muid: 'visitor-2', merchantId: shop.merchantId }, key);
    expect([reused.status, reused.body.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);

    // The visitor's new events are dropped; the collector answers as it always does.
    const host = await collectorHostOf(server, shop);
    const sent = await postEvents(
      server.url,
      host,
      { tagId: shop.tagId, events: [{ event_name: 'PageView' }] },
      {
        cookie: 'muid=visitor-1',
      },
    );
    expect([sent.status, sent.json]).toEqual([202, { accepted: 1 }]);
    const direct = await api(server).post('/v1/collect', {
      tagId: shop.tagId,
      events: [{ event_name: 'X', muid: 'visitor-1' }],
    });
    expect([direct.status, direct.body]).toEqual([202, { accepted: 1 }]);

    const done = await until(async () => {
      const got = await client.get(`/v1/partners/erasures/${res.body.id}`);
      expect(got.status).toBe(200);
      return got.body.status === 'completed' ? got.body : undefined;
    }, 30_000);
    expect(done).toMatchObject({ id: res.body.id, eventsDeleted: 6, completedAt: expect.any(String) });
    expect(await total(shop.merchantId, 'visitor-1')).toBe(0);
    expect(await total(shop.merchantId)).toBe(12);
    expect(await total(other.merchantId, 'visitor-1')).toBe(6);
    // The statistics agree with the events left: two visitors, their events and revenue.
    const after = await summary(shop.merchantId);
    expect(after.totals).toMatchObject({ events: 12, visitors: 2 });
    expect(after.totals).toMatchObject({ purchases: 6, revenue: [{ currency: 'EUR', amount: '30' }] });
    expect((await summary(other.merchantId)).totals).toMatchObject({ events: 6, visitors: 1 });

    await receiver.waitFor(1, 15_000);
    const [webhook] = completedWebhooks();
    expect(webhook).toMatchObject({ type: 'erasure.completed', data: done });
  }, 60_000);

  it('partner-wide: every merchant of the partner loses the visitor; the export filters by muid', async () => {
    const a = await shopWith(['w1', 'w2'], 'b');
    const b = await shopWith(['w1', 'w3'], 'b');
    const exported = await client.get(`/v1/partners/events/export?merchantId=${b.merchantId}&muid=w1`);
    expect(exported.status).toBe(200);
    const lines = exported.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.slice(0, -1).map((e) => e.muid)).toEqual(Array(6).fill('w1'));
    expect(lines.at(-1)).toMatchObject({ complete: true, count: 6 });

    const res = await client.post('/v1/partners/erasures', { muid: 'w1' });
    expect([res.status, res.body.merchantId, res.body.suppress]).toEqual([202, null, false]);
    const done = await until(async () => {
      const got = await client.get(`/v1/partners/erasures/${res.body.id}`);
      return got.body.status === 'completed' ? got.body : undefined;
    }, 30_000);
    expect(done.eventsDeleted).toBe(12);
    for (const tag of [a, b]) {
      expect(await total(tag.merchantId, 'w1')).toBe(0);
      expect(await total(tag.merchantId)).toBe(6);
      expect((await summary(tag.merchantId)).totals).toMatchObject({ events: 6, visitors: 1 });
    }
    // Without suppress, the visitor is collected again once the erasure completed.
    await collectOk(server, a.tagId, visitorEvents('w1', 'again'));
    expect(await total(a.merchantId, 'w1')).toBe(6);
  }, 60_000);

  it("another partner's erasure or merchant is 404; bad input is 400", async () => {
    const tag = await preverifiedTag(server);
    const res = await client.post('/v1/partners/erasures', { muid: 'z1', merchantId: tag.merchantId });
    expect(res.status).toBe(202);
    const stranger = api(server, (await server.createPartner('Stranger')).apiKey);
    const got = await stranger.get(`/v1/partners/erasures/${res.body.id}`);
    expect([got.status, got.body.code]).toEqual([404, 'ERASURE_NOT_FOUND']);
    const theirs = await stranger.post('/v1/partners/erasures', { muid: 'z1', merchantId: tag.merchantId });
    expect([theirs.status, theirs.body.code]).toEqual([404, 'MERCHANT_NOT_FOUND']);
    const missing = await client.get('/v1/partners/erasures/00000000-0000-4000-8000-000000000000');
    expect([missing.status, missing.body.code]).toEqual([404, 'ERASURE_NOT_FOUND']);
    for (const body of [
      {},
      { muid: '' },
      { muid: 7 },
      { muid: 'x', merchantId: 'no' },
      { muid: 'x', suppress: 'yes' },
    ]) {
      const bad = await client.post('/v1/partners/erasures', body);
      expect([JSON.stringify(body), bad.status, bad.body.code]).toEqual([
        JSON.stringify(body),
        400,
        'VALIDATION_ERROR',
      ]);
    }
    const badId = await client.get('/v1/partners/erasures/nope');
    expect(badId.status).toBe(400);
    const badFilter = await client.get(`/v1/partners/events?merchantId=${tag.merchantId}&muid=${'x'.repeat(129)}`);
    expect([badFilter.status, badFilter.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect((await api(server).get(`/v1/partners/erasures/${res.body.id}`)).status).toBe(401);
  });
});
