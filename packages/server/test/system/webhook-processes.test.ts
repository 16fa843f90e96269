// Webhook delivery across server processes (`node --import tsx src/main.ts`) on one scratch
// PostgreSQL database and a real receiver on loopback:
// 1. two processes sending at once: every message arrives exactly once (claims with SKIP LOCKED
//    and a lease), whichever process sent it;
// 2. a process SIGKILLed after the message was committed and while its request was in flight:
//    after a restart the message is delivered (same webhook-id), nothing is lost.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import {
  startWebhookReceiver,
  TEST_TARGET_HOST,
  type TestWebhookReceiver,
  uniquePartnerDomain,
} from '../../src/testing/index.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  type ServerProcess,
  spawnServer,
} from '../helpers/hardening.js';

const pgUp = await postgresAnswers();
if (!pgUp) console.warn('webhook process tests skipped: PostgreSQL does not answer at 127.0.0.1:5432');

const MESSAGES = 60;

describe.skipIf(!pgUp)('webhook delivery across processes', () => {
  let scratch: ScratchDatabase;
  let database: DatabaseHandle;
  let receiver: TestWebhookReceiver;
  let apiKey: string;
  const processes: ServerProcess[] = [];

  const start = async (env: Record<string, string> = {}) => {
    const p = await spawnServer(
      {
        DATABASE_URL: scratch.url,
        TAG_TARGET_HOST: TEST_TARGET_HOST,
        TAG_MONITOR: 'off',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '0',
        // 60 test events queue the load: above the default budget of test calls per partner.
        WEBHOOK_TEST_CALLS_PER_PARTNER: '1000000',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        // Room for a loaded CI: a load spike must not use up every attempt of a message.
        WEBHOOK_RETRY_SCHEDULE: '500ms,1s,2s,4s,8s',
        WEBHOOK_TIMEOUT_MS: '3000',
        ...env,
      },
      30_000,
      [],
      { webhookPollMs: 100 },
    );
    processes.push(p);
    return p;
  };

  const api = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };

  /** Queues a test message; a loaded CI may answer 503 or 429, so it retries with one idempotency key. */
  const queue = async (server: ServerProcess, webhookId: string, key: string) => {
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${server.url}/v1/partners/webhooks/${webhookId}/test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: '{}',
      });
      const body = (await res.json()) as { messageId?: string };
      if (res.ok && body.messageId) return body.messageId;
      if (![429, 503].includes(res.status) || attempt === 5)
        throw new Error(`queueing a test message: ${res.status} ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  };

  beforeAll(async () => {
    scratch = await createScratchDatabase('webhooks');
    database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 });
    apiKey = (await onboardPartner(database.db, { name: 'Hooks', domain: uniquePartnerDomain() }, TEST_TARGET_HOST))
      .apiKey;
    receiver = await startWebhookReceiver();
  }, 120_000);

  afterAll(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await receiver?.close();
    await database?.close();
    await scratch?.drop();
  });

  /** The deliveries once none is pending (or at the deadline, as they are). */
  const settled = async (ms: number) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const rows = rowsOf<{ message_id: string; status: string; attempts: number }>(
        await database.db.execute(sql`select message_id, status, attempts from webhook_deliveries`),
      );
      if (rows.every((row) => row.status !== 'pending') || Date.now() > deadline) return rows;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('two processes deliver each message exactly once', async () => {
    const [a, b] = [await start(), await start()];
    const endpoints: string[] = [];
    for (let i = 0; i < 3; i++)
      endpoints.push((await api(a, 'POST', '/v1/partners/webhooks', { url: receiver.url })).webhookId as string);
    // Queue messages through both processes; both workers are woken by every commit.
    const queued = await Promise.all(
      Array.from({ length: MESSAGES }, (_, i) =>
        queue(i % 2 ? a : b, endpoints[i % endpoints.length] as string, `queue-${i}`),
      ),
    );
    // Generous: under a loaded CI an attempt may time out and wait out its retry's backoff.
    await receiver.waitFor(MESSAGES, 90_000);
    // Under load an attempt may time out after the receiver got it: that message waits for its
    // retry, so wait until none is pending (the receiver answers every request).
    const rows = await settled(90_000);
    const ids = receiver.received.map((r) => r.headers['webhook-id'] as string);
    expect(new Set(ids)).toEqual(new Set(queued));
    // Every request that reached the receiver is an attempt recorded by the process holding the
    // claim: a delivery sent by two processes at once would show more requests than attempts.
    // (An attempt that timed out before the receiver read it is recorded and never seen there.)
    expect(rows).toHaveLength(MESSAGES);
    for (const row of rows) {
      expect(row.status).toBe('succeeded');
      const requests = ids.filter((id) => id === row.message_id).length;
      expect(requests, row.message_id).toBeGreaterThanOrEqual(1);
      expect(requests, row.message_id).toBeLessThanOrEqual(row.attempts);
    }
    const duplicates = ids.length - MESSAGES;
    console.log(
      `webhooks: ${MESSAGES} messages, ${ids.length} requests (${duplicates} retried after a failed attempt)`,
    );
    a.kill('SIGTERM');
    b.kill('SIGTERM');
    await Promise.all([a.exited, b.exited]);
  }, 180_000);

  it('a process SIGKILLed mid-send: the message is delivered after a restart, same webhook-id', async () => {
    receiver.received.length = 0;
    const c = await start();
    const webhookId = (await api(c, 'POST', '/v1/partners/webhooks', { url: receiver.url })).webhookId as string;
    // The first request never gets an answer: the process is killed while it waits.
    receiver.answer('hang');
    const queued = await api(c, 'POST', `/v1/partners/webhooks/${webhookId}/test`, {});
    await receiver.waitFor(1);
    c.kill('SIGKILL');
    await c.exited;
    const [before] = rowsOf<{ status: string; attempts: number }>(
      await database.db.execute(
        sql`select status, attempts from webhook_deliveries where message_id = ${queued.messageId as string}::uuid`,
      ),
    );
    expect(before).toEqual({ status: 'pending', attempts: 0 });

    await start();
    // The killed process's lease runs out (3 x WEBHOOK_TIMEOUT_MS + 5 s = 14 s), then the new one sends it.
    const [, second] = await receiver.waitFor(2, 60_000);
    expect(second?.headers['webhook-id']).toBe(queued.messageId);
    let after: { status: string; attempts: number } | undefined;
    for (let i = 0; i < 100 && after?.status !== 'succeeded'; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      [after] = rowsOf<{ status: string; attempts: number }>(
        await database.db.execute(
          sql`select status, attempts from webhook_deliveries where message_id = ${queued.messageId as string}::uuid`,
        ),
      );
    }
    expect(after?.status).toBe('succeeded');
    // The killed process's attempt was never recorded; every later request was (an attempt that
    // timed out before the receiver read it is recorded and never seen there).
    const requests = receiver.received.filter((r) => r.headers['webhook-id'] === queued.messageId).length;
    expect(requests).toBeGreaterThanOrEqual(2);
    expect(requests).toBeLessThanOrEqual((after?.attempts ?? 0) + 1);
  }, 180_000);
});
