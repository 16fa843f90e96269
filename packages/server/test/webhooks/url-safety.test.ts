import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { api } from '../helpers/api.js';

// A server WITHOUT WEBHOOK_ALLOW_PRIVATE_URLS: private targets are refused at create and at send.
let server: TestServer;
let receiver: TestWebhookReceiver;

beforeAll(async () => {
  server = await startTestServer({
    env: { WEBHOOK_DELIVERY: 'on', WEBHOOK_RETRY_SCHEDULE: '10s' },
    knobs: { webhookPollMs: 50 },
  });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

describe('webhook URL safety without WEBHOOK_ALLOW_PRIVATE_URLS', () => {
  it.each([
    [(receiver) => receiver.url, /must use https/],
    [() => 'https://127.0.0.1:8443/hook', /127\.0\.0\.1 is loopback/],
    [() => 'https://10.0.0.5/hook', /10\.0\.0\.5 is private/],
    [() => 'https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is linkLocal/],
    [() => 'https://[::1]/hook', /::1 is loopback/],
    [() => 'https://localhost/hook', /loopback host/],
  ] as Array<[(r: TestWebhookReceiver) => string, RegExp]>)(
    'refuses a private URL with 400 naming the rule (%#)',
    async (url, rule) => {
      const res = await api(server, server.partner.apiKey).post('/v1/partners/webhooks', { url: url(receiver) });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.message).toMatch(/^url: /);
      expect(res.body.message).toMatch(rule);
    },
  );

  it('refuses at send time too: an endpoint stored with a private address is never called', async () => {
    // Stored directly (as if the name had resolved publicly at create and rebinds now).
    const [row] = await server.app.deps.db
      .insert(webhookEndpoints)
      .values({
        partnerId: server.partner.partnerId,
        url: receiver.url.replace('http:', 'https:'),
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      })
      .returning({ id: webhookEndpoints.id });
    const client = api(server, server.partner.apiKey);
    const test = await client.post(`/v1/partners/webhooks/${row!.id}/test`, {});
    expect(test.status).toBe(202);
    let delivery: Record<string, unknown> | undefined;
    for (let i = 0; i < 100; i++) {
      delivery = (await client.get(`/v1/partners/webhooks/${row!.id}/deliveries`)).body.deliveries[0];
      if ((delivery?.attempts as number) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
    expect(delivery?.lastError).toBe('blocked_address');
    expect(receiver.received).toHaveLength(0);
  });
});
