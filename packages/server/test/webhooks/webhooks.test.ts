import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  startTestServer,
  startWebhookReceiver,
  type TestPartner,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { type Api, api } from '../helpers/api.js';

// Webhooks through the real HTTP transport, the real database (PGlite, or TEST_DATABASE_URL) and a
// real receiver on loopback. Fast retry schedule: 100 ms between attempts, 3 retries.
let server: TestServer;
let receiver: TestWebhookReceiver;
let client: Api;
let other: TestPartner;
let otherClient: Api;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      WEBHOOK_DELIVERY: 'on',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms',
      WEBHOOK_TIMEOUT_MS: '1000',
    },
    knobs: { webhookPollMs: 50 },
  });
  receiver = await startWebhookReceiver();
  client = api(server, server.partner.apiKey);
  other = await server.createPartner('Other');
  otherClient = api(server, other.apiKey);
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.fallback = 200;
});

const create = async (body: Record<string, unknown> = {}) => {
  const res = await client.post('/v1/partners/webhooks', { url: receiver.url, ...body });
  expect(res.status).toBe(201);
  return res.body as { webhookId: string; secret: string; url: string };
};

const deliveries = async (webhookId: string) => {
  const res = await client.get(`/v1/partners/webhooks/${webhookId}/deliveries`);
  expect(res.status).toBe(200);
  return res.body.deliveries as Array<Record<string, unknown>>;
};

const until = async <T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000): Promise<T> => {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('webhook endpoints', () => {
  it('creates (201, secret once), lists without secrets, deletes (204) and then answers 404', async () => {
    const created = await create({ events: ['tag.verified'], description: 'ops' });
    expect(created).toMatchObject({
      webhookId: expect.any(String),
      url: receiver.url,
      events: ['tag.verified'],
      description: 'ops',
      createdAt: expect.any(String),
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const list = await client.get('/v1/partners/webhooks?limit=100');
    expect(list.status).toBe(200);
    const listed = list.body.webhooks.find((w: { webhookId: string }) => w.webhookId === created.webhookId);
    expect(listed).toEqual({
      webhookId: created.webhookId,
      url: receiver.url,
      events: ['tag.verified'],
      description: 'ops',
      livemode: true,
      createdAt: expect.any(String),
    });
    expect(list.text).not.toContain('whsec_');
    expect(list.body.pagination).toMatchObject({ currentPage: 1, itemsPerPage: 100 });

    const removed = await client.request('DELETE', `/v1/partners/webhooks/${created.webhookId}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    const again = await client.request('DELETE', `/v1/partners/webhooks/${created.webhookId}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: expect.any(String), code: 'WEBHOOK_NOT_FOUND' });
    const listedAfter = await client.get('/v1/partners/webhooks?limit=100');
    expect(listedAfter.body.webhooks.map((w: { webhookId: string }) => w.webhookId)).not.toContain(created.webhookId);
  });

  it("answers 404 for another partner's webhook on every route", async () => {
    const { webhookId } = await create();
    const test = await client.post(`/v1/partners/webhooks/${webhookId}/test`, {});
    const deliveryId = test.body.deliveryId as string;
    const responses = await Promise.all([
      otherClient.request('DELETE', `/v1/partners/webhooks/${webhookId}`),
      otherClient.post(`/v1/partners/webhooks/${webhookId}/rotate-secret`, {}),
      otherClient.post(`/v1/partners/webhooks/${webhookId}/test`, {}),
      otherClient.get(`/v1/partners/webhooks/${webhookId}/deliveries`),
      otherClient.post(`/v1/partners/webhooks/${webhookId}/deliveries/${deliveryId}/retry`, {}),
    ]);
    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('WEBHOOK_NOT_FOUND');
    }
    const foreign = await otherClient.get('/v1/partners/webhooks?limit=100');
    expect(foreign.body.webhooks).toEqual([]);
    // A delivery id of another endpoint of the same partner: 404 too.
    const second = await create();
    const cross = await client.post(`/v1/partners/webhooks/${second.webhookId}/deliveries/${deliveryId}/retry`, {});
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe('WEBHOOK_DELIVERY_NOT_FOUND');
  });

  it('validates input: bad URL, unknown event type, malformed id', async () => {
    const bad = await client.post('/v1/partners/webhooks', { url: 'not a url' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: expect.stringContaining('url'), code: 'VALIDATION_ERROR' });
    const ftp = await client.post('/v1/partners/webhooks', { url: 'ftp://example.com/x' });
    expect(ftp.status).toBe(400);
    const events = await client.post('/v1/partners/webhooks', { url: receiver.url, events: ['tag.nope'] });
    expect(events.status).toBe(400);
    expect(events.body.message).toContain('events');
    const id = await client.request('DELETE', '/v1/partners/webhooks/not-a-uuid');
    expect(id.status).toBe(400);
  });
});

describe('delivery', () => {
  it('sends webhook.test signed with the standardwebhooks library format; the log shows it succeeded', async () => {
    const { webhookId, secret } = await create();
    const test = await client.post(`/v1/partners/webhooks/${webhookId}/test`, {});
    expect(test.status).toBe(202);
    expect(test.body).toMatchObject({ eventType: 'webhook.test', status: 'pending', attempts: 0 });
    const [request] = await receiver.waitFor(1);
    const headers = request!.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(test.body.messageId);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const event = new Webhook(secret).verify(request!.body, headers) as Record<string, unknown>;
    expect(event).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      livemode: true,
      data: { webhookId, message: expect.any(String) },
    });
    const log = await until(
      () => deliveries(webhookId),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(log[0]).toMatchObject({
      deliveryId: test.body.deliveryId,
      messageId: test.body.messageId,
      eventType: 'webhook.test',
      status: 'succeeded',
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
  });

  it('a receiver that answers 500 twice gets the message three times with the same webhook-id', async () => {
    const { webhookId } = await create();
    receiver.answer(500, 500);
    const test = await client.post(`/v1/partners/webhooks/${webhookId}/test`, {});
    const requests = await receiver.waitFor(3);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([test.body.messageId]));
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    const log = await until(
      () => deliveries(webhookId),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(log[0]).toMatchObject({ status: 'succeeded', attempts: 3, lastStatusCode: 200 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(3);
  });

  it('fails after the schedule, keeps the last error; a manual retry sends it once more', async () => {
    const { webhookId } = await create();
    receiver.fallback = 503;
    const test = await client.post(`/v1/partners/webhooks/${webhookId}/test`, {});
    const log = await until(
      () => deliveries(webhookId),
      (rows) => rows[0]?.status === 'failed',
    );
    expect(log[0]).toMatchObject({ status: 'failed', attempts: 4, lastStatusCode: 503, lastError: 'http_status' });
    expect(receiver.received).toHaveLength(4);

    receiver.fallback = 200;
    const retry = await client.post(`/v1/partners/webhooks/${webhookId}/deliveries/${test.body.deliveryId}/retry`, {});
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ deliveryId: test.body.deliveryId, status: 'pending' });
    const after = await until(
      () => deliveries(webhookId),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(after[0]).toMatchObject({ status: 'succeeded', attempts: 5, lastStatusCode: 200 });
    expect(receiver.received[4]?.headers['webhook-id']).toBe(test.body.messageId);
  });

  it('an endpoint that never answers fails by the deadline and does not hold up another endpoint', async () => {
    const slow = await startWebhookReceiver();
    slow.fallback = 'hang';
    try {
      const dead = (await client.post('/v1/partners/webhooks', { url: slow.url })).body.webhookId as string;
      const alive = (await create()).webhookId;
      for (let i = 0; i < 6; i++) await client.post(`/v1/partners/webhooks/${dead}/test`, {});
      await client.post(`/v1/partners/webhooks/${alive}/test`, {});
      await receiver.waitFor(1, 3000);
      const log = await until(
        () => deliveries(dead),
        (rows) => rows.some((row) => (row.attempts as number) >= 1),
      );
      const attempted = log.find((row) => (row.attempts as number) >= 1);
      expect(attempted?.lastError).toBe('timeout');
    } finally {
      await slow.close();
    }
  });

  it('after a rotation each message carries two signatures, one per secret, both valid', async () => {
    const { webhookId, secret: oldSecret } = await create();
    const rotated = await client.post(`/v1/partners/webhooks/${webhookId}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(oldSecret);
    const overlap = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(overlap).toBeGreaterThan(23 * 3600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);

    await client.post(`/v1/partners/webhooks/${webhookId}/test`, {});
    const [request] = await receiver.waitFor(1);
    const headers = request!.headers as Record<string, string>;
    const signatures = headers['webhook-signature']!.split(' ');
    expect(signatures).toHaveLength(2);
    for (const secret of [rotated.body.secret as string, oldSecret]) {
      expect(() => new Webhook(secret).verify(request!.body, headers)).not.toThrow();
    }
    // Each signature alone is one secret's.
    const only = (signature: string) => ({ ...headers, 'webhook-signature': signature });
    expect(() => new Webhook(rotated.body.secret).verify(request!.body, only(signatures[0]!))).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(request!.body, only(signatures[1]!))).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(request!.body, only(signatures[0]!))).toThrow();
  });

  it('event filters: an endpoint only gets the types it subscribed to (webhook.test always)', async () => {
    const { webhookId } = await create({ events: ['tag.disconnected'] });
    const test = await client.post(`/v1/partners/webhooks/${webhookId}/test`, {});
    expect(test.status).toBe(202);
    await receiver.waitFor(1);
  });

  it('the same procedures over tRPC', async () => {
    const caller = server.caller(server.partner.apiKey);
    const created = await caller.webhooks.create({ url: receiver.url });
    expect(created.secret).toMatch(/^whsec_/);
    const listed = await caller.webhooks.list({ page: 1, limit: 100 });
    expect(listed.webhooks.some((w) => w.webhookId === created.webhookId)).toBe(true);
    const delivery = await caller.webhooks.test({ webhookId: created.webhookId });
    await receiver.waitFor(1);
    const page = await caller.webhooks.deliveries.list({ webhookId: created.webhookId, page: 1, limit: 10 });
    expect(page.deliveries[0]?.deliveryId).toBe(delivery.deliveryId);
    await caller.webhooks.deliveries.retry({ webhookId: created.webhookId, deliveryId: delivery.deliveryId });
    await receiver.waitFor(2);
    expect((await caller.webhooks.rotateSecret({ webhookId: created.webhookId })).secret).toMatch(/^whsec_/);
    await caller.webhooks.delete({ webhookId: created.webhookId });
    await expect(caller.webhooks.test({ webhookId: created.webhookId })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
