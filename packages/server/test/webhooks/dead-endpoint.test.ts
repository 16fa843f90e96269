import { and, eq, gt } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookDeliveries } from '../../src/db/schema/index.js';
import { enqueueWebhookEvent } from '../../src/features/webhooks/outbox.js';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { type Api, api } from '../helpers/api.js';
import { parseMetrics } from '../helpers/prometheus.js';

// A dead endpoint (accepts, never answers) with many pending deliveries holds one of the process's
// delivery slots at a time: an endpoint gets its WEBHOOK_ENDPOINT_CONCURRENCY only once it has
// answered, and one request at a time again after an attempt got no answer, until one is answered
// (jobs/endpoint-answers.ts). Another endpoint's delivery goes out at once throughout. Real HTTP, real database (PGlite, or
// TEST_DATABASE_URL), real receivers, the gauge read from GET /metrics.
const PER_ENDPOINT = 2;
/**
 * The attempt timeout: a delivery queued behind the dead endpoint's attempts would wait up to this
 * long. Long enough that "at once" (under 2/3 of it) holds on a loaded machine, where a poll and a
 * request alone took 750 ms.
 */
const TIMEOUT_MS = 3000;
const TOKEN = 'metrics-token-dead-endpoint';
let server: TestServer;
let live: TestWebhookReceiver;
let dead: TestWebhookReceiver;
let client: Api;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      WEBHOOK_DELIVERY: 'on',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_ENDPOINT_CONCURRENCY: String(PER_ENDPOINT),
      METRICS_TOKEN: TOKEN,
    },
    knobs: { webhookPollMs: 50 },
  });
  live = await startWebhookReceiver();
  dead = await startWebhookReceiver();
  dead.fallback = 'hang';
  client = api(server, server.partner.apiKey);
});
afterAll(async () => {
  await server?.close();
  await live?.close();
  await dead?.close();
});

async function probingGauge(): Promise<number | undefined> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return parseMetrics(await res.text()).value('partner_tags_webhook_endpoints_probing');
}

describe('a dead endpoint', () => {
  it('is sent one request at a time until it answers; others go out at once', async () => {
    const { db } = server.app.deps;
    const deadId = (await client.post('/v1/partners/webhooks', { url: dead.url })).body.webhookId as string;
    expect(await probingGauge()).toBe(0);
    await db.transaction(async (tx) => {
      for (let i = 0; i < 40; i++) {
        await enqueueWebhookEvent(tx, {
          partnerId: server.partner.partnerId,
          type: 'webhook.test',
          data: { webhookId: deadId, message: 'x' },
          endpointId: deadId,
        });
      }
    });
    // Four requests, each after the last one's timeout (never PER_ENDPOINT at once).
    await dead.waitFor(4, 12 * TIMEOUT_MS);
    const arrivals = dead.received.map((r) => r.receivedAt);
    for (let i = 1; i < arrivals.length; i++) {
      expect(arrivals[i] as number, `request ${i + 1} came with the one before it`).toBeGreaterThanOrEqual(
        (arrivals[i - 1] as number) + TIMEOUT_MS / 2,
      );
    }
    expect(await probingGauge()).toBe(1);
    const leased = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, deadId), gt(webhookDeliveries.claimedUntil, new Date())));
    expect(leased.length).toBeLessThanOrEqual(1);

    // Another endpoint's delivery goes out at once, not after the dead one's next timeout (a
    // bound well under the timeout, with room for a busy machine's poll and request).
    const aliveId = (await client.post('/v1/partners/webhooks', { url: live.url })).body.webhookId as string;
    const started = Date.now();
    await client.post(`/v1/partners/webhooks/${aliveId}/test`, {});
    await live.waitFor(1, 5_000);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * (2 / 3));

    // It answers again: the next probe is answered, probing ends, the rest of its queue goes out.
    dead.fallback = 200;
    const unsent = async () =>
      (
        await db
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(and(eq(webhookDeliveries.endpointId, deadId), eq(webhookDeliveries.attempts, 0)))
      ).length;
    for (let waited = 0; (await unsent()) > 0 && waited < 15 * TIMEOUT_MS; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await unsent()).toBe(0);
    expect(await probingGauge()).toBe(0);
  }, 120_000);
});
