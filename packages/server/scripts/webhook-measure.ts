// Webhook delivery figures (`pnpm --filter @partner/server webhooks:measure`): one server (PGlite,
// or TEST_DATABASE_URL), real receivers on loopback.
// 1. deliveries per second: MESSAGES messages to ENDPOINTS live endpoints;
// 2. the same with a dead endpoint (accepts, never answers) holding DEAD pending deliveries: the
//    live endpoints' rate beside it, as a ratio of (1) measured in the same run.

import { enqueueWebhookEvent } from '../src/services/webhooks/outbox.js';
import { startTestServer, startWebhookReceiver, type TestWebhookReceiver } from '../src/testing/index.js';

const MESSAGES = Number(process.env.MESSAGES ?? 2000);
const ENDPOINTS = 8;
const DEAD = 200;

const server = await startTestServer({
  env: {
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_RETRY_SCHEDULE: '1h',
  },
});
const { db } = server.app.deps;
const partnerId = server.partner.partnerId;
const headers = { authorization: `Bearer ${server.partner.apiKey}`, 'content-type': 'application/json' };

async function endpoint(url: string, events?: string[]) {
  const res = await fetch(`${server.url}/v1/partners/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url, events }),
  });
  return ((await res.json()) as { webhookId: string }).webhookId;
}

async function run(label: string, receiver: TestWebhookReceiver, type: 'tag.activated' | 'tag.reconnected') {
  receiver.received.length = 0;
  const perMessage = ENDPOINTS;
  const started = performance.now();
  // Queued in transactions of 50 messages (each message fans out to every subscribed endpoint).
  for (let i = 0; i < MESSAGES / perMessage; i += 50) {
    await db.transaction(async (tx) => {
      for (let j = i; j < Math.min(i + 50, MESSAGES / perMessage); j++) {
        await enqueueWebhookEvent(tx, {
          partnerId,
          type,
          data: { tagId: '00000000-0000-4000-8000-000000000000', n: j },
        });
      }
    });
  }
  await receiver.waitFor(MESSAGES, 600_000);
  const seconds = (performance.now() - started) / 1000;
  const rate = MESSAGES / seconds;
  console.log(`${label}: ${MESSAGES} deliveries in ${seconds.toFixed(2)} s = ${rate.toFixed(0)}/s`);
  return rate;
}

const live = await startWebhookReceiver();
const dead = await startWebhookReceiver();
dead.fallback = 'hang';
try {
  for (let i = 0; i < ENDPOINTS; i++) await endpoint(`${live.url}?e=${i}`, ['tag.activated', 'tag.reconnected']);
  const baseline = await run('live endpoints alone', live, 'tag.activated');

  const deadId = await endpoint(dead.url, ['webhook.test']);
  for (let i = 0; i < DEAD; i++) {
    await enqueueWebhookEvent(db, {
      partnerId,
      type: 'webhook.test',
      data: { webhookId: deadId, message: 'x' },
      endpointId: deadId,
    });
  }
  const beside = await run(`beside a dead endpoint with ${DEAD} pending`, live, 'tag.reconnected');
  console.log(
    `ratio (beside dead / alone): ${(beside / baseline).toFixed(2)}; dead endpoint requests in flight seen: ${dead.received.length}`,
  );
} finally {
  await live.close();
  await dead.close();
  await server.close();
}
