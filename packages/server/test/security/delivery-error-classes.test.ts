// Issue 30: a delivery's `lastError` was the error's text (`ECONNREFUSED: connect ECONNREFUSED
// 10.1.2.3:5432`, TLS and peer messages...), so a partner could use its endpoint URL to probe which
// hosts and ports accept connections and what answers there. The API now reports a class; the
// detail is only in the server's log. Real deliveries through the worker to real sockets.
import net from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookDeliveries } from '../../src/db/schema/index.js';
import {
  freePort,
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';

let server: TestServer;
let receiver: TestWebhookReceiver;
let resetter: net.Server;
const logLines: string[] = [];

beforeAll(async () => {
  server = await startTestServer({
    env: {
      LOG_LEVEL: 'info',
      WEBHOOK_DELIVERY: 'on',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      WEBHOOK_TIMEOUT_MS: '800',
    },
    knobs: { webhookPollMs: 50 },
    logDestination: { write: (line) => void logLines.push(line) },
  });
  receiver = await startWebhookReceiver();
  // Accepts, then closes the connection at once without answering.
  resetter = net.createServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => resetter.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await new Promise((resolve) => resetter?.close(resolve));
});

const client = () => api(server, server.partner.apiKey);

/** Creates an endpoint for `url`, sends it a test event and returns the delivery once attempted, with the response text. */
async function attempted(url: string): Promise<{ delivery: Json; text: string; webhookId: string }> {
  const created = await client().post('/v1/partners/webhooks', { url });
  expect(created.status, created.text).toBe(201);
  const webhookId = created.body.webhookId as string;
  expect((await client().post(`/v1/partners/webhooks/${webhookId}/test`, {})).status).toBe(202);
  for (let i = 0; i < 200; i++) {
    const res = await client().get(`/v1/partners/webhooks/${webhookId}/deliveries`);
    const [delivery] = res.body.deliveries;
    if (delivery?.attempts > 0) return { delivery, text: res.text, webhookId };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no attempt recorded for ${url}`);
}

describe('delivery errors are reported as classes, the detail only in the log', () => {
  it('connection_refused: nothing listens on the port', async () => {
    const port = await freePort();
    const { delivery, text } = await attempted(`http://127.0.0.1:${port}/hook`);
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: null,
      lastError: 'connection_refused',
    });
    expect(text).not.toMatch(/ECONNREFUSED|connect /);
    // The log keeps what happened, for the operator.
    const line = logLines.find((l) => l.includes('webhook delivery attempt failed') && l.includes(delivery.deliveryId));
    expect(line).toMatch(/"error":"connection_refused"/);
    expect(line).toMatch(/"detail":"[^"]*ECONNREFUSED/);
  });

  it('http_status: an answer outside 2xx (the status is lastStatusCode)', async () => {
    receiver.answer(503);
    const { delivery } = await attempted(receiver.url);
    expect(delivery).toMatchObject({ lastStatusCode: 503, lastError: 'http_status' });
  });

  it('timeout: no answer within WEBHOOK_TIMEOUT_MS', async () => {
    receiver.answer('hang');
    const { delivery, text } = await attempted(receiver.url);
    expect(delivery).toMatchObject({ lastStatusCode: null, lastError: 'timeout' });
    expect(text).not.toMatch(/800 ms|within/);
  });

  it('dns: the name does not resolve', async () => {
    const { delivery, text } = await attempted(`http://missing.partner-example.com:${new URL(receiver.url).port}/hook`);
    expect(delivery.lastError).toBe('dns');
    expect(text).not.toMatch(/ENOTFOUND|queryA/);
  });

  it('tls: https to a port that does not speak TLS', async () => {
    const { delivery, text } = await attempted(receiver.url.replace('http:', 'https:'));
    expect(delivery.lastError).toBe('tls');
    expect(text).not.toMatch(/EPROTO|SSL|wrong version/i);
  });

  it('connection_reset: the peer closes without answering', async () => {
    const { port } = resetter.address() as net.AddressInfo;
    const { delivery, text } = await attempted(`http://127.0.0.1:${port}/hook`);
    expect(delivery.lastError).toBe('connection_reset');
    expect(text).not.toMatch(/ECONNRESET|socket|other side/i);
  });

  it('a row stored with raw text before classes is reported as its class', async () => {
    const port = await freePort();
    const { delivery, webhookId } = await attempted(`http://127.0.0.1:${port}/hook`);
    await server.app.deps.db
      .update(webhookDeliveries)
      .set({ lastError: 'ECONNREFUSED: connect ECONNREFUSED 10.1.2.3:5432' })
      .where(eq(webhookDeliveries.id, delivery.deliveryId));
    const res = await client().get(`/v1/partners/webhooks/${webhookId}/deliveries`);
    expect(res.body.deliveries[0].lastError).toBe('connection_refused');
    expect(res.text).not.toContain('10.1.2.3');
  });
});
