import { and, eq, gt } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookDeliveries } from '../../src/db/schema/index.js';
import { enqueueWebhookEvent } from '../../src/services/webhooks/outbox.js';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { type Api, api } from '../helpers/api.js';

// A dead endpoint (accepts, never answers) with many pending deliveries takes no more of the
// process's delivery slots than its own per-endpoint share (WEBHOOK_ENDPOINT_CONCURRENCY sending,
// fewer waiting), however many of its attempts time out; another endpoint's delivery goes out at
// once. Real HTTP, real database (PGlite, or TEST_DATABASE_URL), real receivers.
const PER_ENDPOINT = 2;
/** The attempt timeout: a delivery queued behind the dead endpoint's attempts would wait up to this long. */
const TIMEOUT_MS = 1500;
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
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_ENDPOINT_CONCURRENCY: String(PER_ENDPOINT),
    },
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

describe('a dead endpoint', () => {
  it('holds at most its share of the delivery slots while its attempts time out', async () => {
    const { db } = server.app.deps;
    const deadId = (await client.post('/v1/partners/webhooks', { url: dead.url })).body.webhookId as string;
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
    // Several timeout cycles: each freed slot used to claim PER_ENDPOINT more of its rows.
    await dead.waitFor(4 * PER_ENDPOINT, 10 * TIMEOUT_MS);
    const leased = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, deadId), gt(webhookDeliveries.claimedUntil, new Date())));
    expect(leased.length).toBeLessThanOrEqual(2 * PER_ENDPOINT - 1);

    // Another endpoint's delivery goes out at once, not after the dead one's next timeout (a
    // bound well under the timeout, with room for a busy machine's poll and request).
    const aliveId = (await client.post('/v1/partners/webhooks', { url: live.url })).body.webhookId as string;
    const started = Date.now();
    await client.post(`/v1/partners/webhooks/${aliveId}/test`, {});
    await live.waitFor(1, 5_000);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * (2 / 3));
  });
});
