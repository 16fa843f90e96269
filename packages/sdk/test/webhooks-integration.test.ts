// client.webhooks.* against the real server (PGlite in memory, or TEST_DATABASE_URL) and a real
// node:http receiver that verifies every delivery with client.webhooks.unwrap.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, PartnerClient, type WebhookEvent } from '../src/index.js';
import { startRealServer, type TestServer } from './real-server.js';

describe('client.webhooks against the real server', () => {
  let server: TestServer;
  let client: PartnerClient;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: Array<{ body: string; headers: http.IncomingHttpHeaders }> = [];
  let answers: number[] = [];

  beforeAll(async () => {
    server = await startRealServer(
      { WEBHOOK_DELIVERY: 'on', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms,100ms' },
      { webhookPollMs: 50 },
    );
    client = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url, maxRetries: 1 });
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
        res.writeHead(answers.shift() ?? 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  }, 120_000);

  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await server?.close();
  });

  const waitFor = async (count: number) => {
    for (let i = 0; i < 200 && received.length < count; i++) await new Promise((r) => setTimeout(r, 50));
    expect(received.length).toBeGreaterThanOrEqual(count);
  };

  it('create, list, test (verified with unwrap), deliveries, retry, rotate (two signatures), delete', async () => {
    const created = await client.webhooks.create({ url: receiverUrl, description: 'sdk' });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.secretOmitted).toBe(false);
    expect(created.events).toBeNull();

    const listed = [];
    for await (const endpoint of client.webhooks.list({ limit: 1 })) listed.push(endpoint);
    expect(listed.map((e) => e.webhookId)).toContain(created.webhookId);
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    answers = [500];
    const delivery = await client.webhooks.test(created.webhookId);
    expect(delivery).toMatchObject({ eventType: 'webhook.test', status: 'pending' });
    await waitFor(2);
    const event: WebhookEvent = await client.webhooks.unwrap(received[1]!.body, received[1]!.headers, created.secret!);
    expect(event.type).toBe('webhook.test');
    if (event.type === 'webhook.test') expect(event.data.webhookId).toBe(created.webhookId);
    expect(received[0]!.headers['webhook-id']).toBe(received[1]!.headers['webhook-id']);

    let page = await client.webhooks.deliveries.list(created.webhookId);
    for (let i = 0; i < 50 && page.data[0]?.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      page = await client.webhooks.deliveries.list(created.webhookId);
    }
    expect(page.data[0]).toMatchObject({ deliveryId: delivery.deliveryId, status: 'succeeded', attempts: 2 });

    const retried = await client.webhooks.deliveries.retry(created.webhookId, delivery.deliveryId);
    expect(retried.status).toBe('pending');
    await waitFor(3);

    const rotated = await client.webhooks.rotateSecret(created.webhookId);
    await client.webhooks.test(created.webhookId);
    await waitFor(4);
    const last = received[3]!;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
    await expect(client.webhooks.unwrap(last.body, last.headers, rotated.secret!)).resolves.toMatchObject({
      type: 'webhook.test',
    });
    await expect(client.webhooks.unwrap(last.body, last.headers, created.secret!)).resolves.toMatchObject({
      type: 'webhook.test',
    });

    await expect(client.webhooks.delete(created.webhookId)).resolves.toBeUndefined();
    const error = await client.webhooks.test(created.webhookId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).code).toBe('WEBHOOK_NOT_FOUND');
  });
});
