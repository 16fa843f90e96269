import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { type WebhookDeliveryStatus, webhookEndpoints } from '../../src/db/schema/index.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { deleteExpiredWebhooks } from '../../src/features/webhooks/expired-webhooks.js';
import { createWebhookRetention } from '../../src/jobs/webhook-retention.js';
import { parseEnv } from '../../src/kernel/env.js';
import { createLogger } from '../../src/kernel/logger.js';
import { createMetrics } from '../../src/kernel/metrics.js';
import { openTestPglite, uniquePartnerDomain } from '../../src/testing/index.js';

// Webhook retention (features/webhooks/expired-webhooks.ts, jobs/webhook-retention.ts) on the database the
// suite runs on (TEST_DATABASE_URL: PostgreSQL; else PGlite): finished deliveries of messages past
// retention go, then messages with no delivery left; a pending delivery and its message stay
// whatever their age; at most a batch per statement, oldest first.
const DAY_MS = 86_400_000;
const RETENTION_MS = 30 * DAY_MS;
const pg = process.env.TEST_DATABASE_URL;
let database: DatabaseHandle;
let partnerId: string;
let endpointA: string;
let endpointB: string;

/** An endpoint; `deletedDaysAgo`: deleted by its partner that long ago. */
async function endpoint(deletedDaysAgo?: number): Promise<string> {
  const [row] = await database.db
    .insert(webhookEndpoints)
    .values({
      partnerId,
      url: 'https://example.com/hook',
      secret: 'whsec_x',
      deletedAt: deletedDaysAgo === undefined ? null : new Date(Date.now() - deletedDaysAgo * DAY_MS),
    })
    .returning({ id: webhookEndpoints.id });
  return row!.id;
}

beforeAll(async () => {
  database = pg ? await openDatabase({ kind: 'postgres', url: pg }) : await openTestPglite();
  partnerId = (await onboardPartner(database.db, { name: 'r', domain: uniquePartnerDomain() }, 'tags.example.com'))
    .partnerId;
  endpointA = await endpoint();
  endpointB = await endpoint();
});
afterAll(() => database?.close());
// Every test starts with no messages (they cascade to deliveries) and only the two live endpoints.
beforeEach(async () => {
  await database.db.execute(sql`delete from webhook_messages`);
  await database.db.execute(sql`delete from webhook_endpoints where deleted_at is not null`);
});

/**
 * A message created `ageDays` ago (its data `{ label }`), with one delivery per status given (to
 * endpoint A, then B, or to the endpoints given).
 */
async function message(
  label: string,
  ageDays: number,
  statuses: WebhookDeliveryStatus[],
  to = [endpointA, endpointB],
): Promise<string> {
  const [row] = rowsOf<{ id: string }>(
    await database.db.execute(sql`
      insert into webhook_messages (partner_id, type, data, created_at)
      values (${partnerId}::uuid, 'webhook.test', jsonb_build_object('label', ${label}::text),
              now() - ${ageDays}::float8 * interval '1 day')
      returning id`),
  );
  for (const [i, status] of statuses.entries()) {
    await database.db.execute(sql`
      insert into webhook_deliveries (message_id, endpoint_id, status, attempts, next_attempt_at, created_at)
      values (${row!.id}::uuid, ${to[i]!}::uuid, ${status}, 1,
              ${status === 'pending' ? sql`now()` : sql`null`}, now() - ${ageDays}::float8 * interval '1 day')`);
  }
  return row!.id;
}

async function left(): Promise<{ messages: string[]; deliveries: string[] }> {
  const messages = rowsOf<{ label: string }>(
    await database.db.execute(sql`select data->>'label' as label from webhook_messages order by label`),
  ).map((r) => r.label);
  const deliveries = rowsOf<{ d: string }>(
    await database.db.execute(sql`
      select (m.data->>'label') || ':' || d.status as d
      from webhook_deliveries d join webhook_messages m on m.id = d.message_id order by d`),
  ).map((r) => r.d);
  return { messages, deliveries };
}

describe('webhook retention', () => {
  it('deletes finished deliveries past retention, then messages with none left; keeps pending and recent ones', async () => {
    await message('old-done', 40, ['succeeded', 'failed']);
    await message('old-retrying', 40, ['succeeded', 'pending']);
    await message('old-unsent', 40, []);
    await message('recent-done', 1, ['succeeded']);
    await message('recent-unsent', 29, []);

    expect(await deleteExpiredWebhooks(database.db, RETENTION_MS)).toEqual({
      deliveries: 3,
      messages: 2,
      endpoints: 0,
    });
    expect(await left()).toEqual({
      messages: ['old-retrying', 'recent-done', 'recent-unsent'],
      deliveries: ['old-retrying:pending', 'recent-done:succeeded'],
    });
    // Nothing more to do until something ages or finishes.
    expect(await deleteExpiredWebhooks(database.db, RETENTION_MS)).toEqual({
      deliveries: 0,
      messages: 0,
      endpoints: 0,
    });

    // The retried delivery finishes: its message goes on the next pass.
    await database.db.execute(sql`update webhook_deliveries set status = 'succeeded', next_attempt_at = null`);
    expect(await deleteExpiredWebhooks(database.db, RETENTION_MS)).toEqual({
      deliveries: 1,
      messages: 1,
      endpoints: 0,
    });
    expect((await left()).messages).toEqual(['recent-done', 'recent-unsent']);
  });

  it('takes at most a batch per statement, oldest first', async () => {
    for (let i = 1; i <= 5; i++) await message(`m${i}`, 30 + i, ['succeeded']);
    // m5 (35 days) and m4 are the oldest.
    expect(await deleteExpiredWebhooks(database.db, RETENTION_MS, 2)).toEqual({
      deliveries: 2,
      messages: 2,
      endpoints: 0,
    });
    expect((await left()).messages).toEqual(['m1', 'm2', 'm3']);
    expect(await deleteExpiredWebhooks(database.db, RETENTION_MS, 2)).toEqual({
      deliveries: 2,
      messages: 2,
      endpoints: 0,
    });
    expect(await deleteExpiredWebhooks(database.db, RETENTION_MS, 2)).toEqual({
      deliveries: 1,
      messages: 1,
      endpoints: 0,
    });
    expect(await left()).toEqual({ messages: [], deliveries: [] });
  });

  it('removes endpoints deleted before the cutoff once none of their deliveries is left', async () => {
    const goneLongAgo = await endpoint(40);
    const goneLongAgoBusy = await endpoint(40);
    const goneRecently = await endpoint(1);
    await message('to-gone', 40, ['failed'], [goneLongAgo]);
    await message('to-gone-busy', 5, ['failed'], [goneLongAgoBusy]);
    const ids = async () =>
      rowsOf<{ id: string }>(
        await database.db.execute(sql`select id from webhook_endpoints where deleted_at is not null`),
      ).map((r) => r.id);
    const before = await ids();
    expect(before).toEqual(expect.arrayContaining([goneLongAgo, goneLongAgoBusy, goneRecently]));

    // The old delivery and its message go, then its endpoint, in one pass; the others stay.
    expect(await deleteExpiredWebhooks(database.db, RETENTION_MS)).toEqual({
      deliveries: 1,
      messages: 1,
      endpoints: 1,
    });
    const after = await ids();
    expect(after).not.toContain(goneLongAgo);
    expect(after).toEqual(expect.arrayContaining([goneLongAgoBusy, goneRecently]));
    // The live endpoints are never touched.
    const live = rowsOf<{ id: string }>(
      await database.db.execute(sql`select id from webhook_endpoints where deleted_at is null`),
    ).map((r) => r.id);
    expect(live).toEqual(expect.arrayContaining([endpointA, endpointB]));
  });

  it('reads the retention from WEBHOOK_RETENTION: 30 days by default, at least an hour', () => {
    expect(parseEnv({}).WEBHOOK_RETENTION).toBe(RETENTION_MS);
    expect(parseEnv({ WEBHOOK_RETENTION: '7d' }).WEBHOOK_RETENTION).toBe(7 * DAY_MS);
    expect(() => parseEnv({ WEBHOOK_RETENTION: '10m' })).toThrow(/WEBHOOK_RETENTION/);
    expect(() => parseEnv({ WEBHOOK_RETENTION: 'forever' })).toThrow(/WEBHOOK_RETENTION/);
  });

  it('the job deletes at start, goes on at once while batches come back full, and counts what it deleted', async () => {
    // More than one batch (1,000) of expired messages, and one that must stay.
    await database.db.execute(sql`
      insert into webhook_messages (partner_id, type, data, created_at)
      select ${partnerId}::uuid, 'webhook.test', jsonb_build_object('label', 'bulk' || i), now() - interval '31 days'
      from generate_series(1, 1500) i`);
    await message('recent', 1, ['succeeded']);
    const metrics = createMetrics({ processMetrics: false });
    const job = createWebhookRetention({
      db: database.db,
      retentionMs: RETENTION_MS,
      logger: createLogger({ LOG_LEVEL: 'silent' }),
      metrics,
      intervalMs: 3_600_000,
    });
    job.start();
    try {
      const deadline = Date.now() + 10_000;
      while ((await left()).messages.length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await job.stop();
    }
    expect((await left()).messages).toEqual(['recent']);
    const text = (await metrics.render()).body;
    expect(text).toMatch(/partner_tags_webhook_retention_deleted_total\{table="messages"\} 1500/);
    expect(text).toMatch(/partner_tags_webhook_retention_deleted_total\{table="deliveries"\} 0/);
  });

  it.skipIf(!pg)('leaves a delivery another transaction holds (a worker, a retry) for a later pass', async () => {
    const messageId = await message('held', 40, ['failed']);
    const other = await openDatabase({ kind: 'postgres', url: pg! });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = other.db.transaction(async (tx) => {
        await tx.execute(sql`select id from webhook_deliveries where message_id = ${messageId}::uuid for update`);
        locked();
        await released;
        // A retry: the delivery is pending again when the lock is let go.
        await tx.execute(sql`update webhook_deliveries set status = 'pending', next_attempt_at = now()`);
      });
      await isLocked;
      expect(await deleteExpiredWebhooks(database.db, RETENTION_MS)).toEqual({
        deliveries: 0,
        messages: 0,
        endpoints: 0,
      });
      release();
      await holder;
      expect(await deleteExpiredWebhooks(database.db, RETENTION_MS)).toEqual({
        deliveries: 0,
        messages: 0,
        endpoints: 0,
      });
      expect(await left()).toEqual({ messages: ['held'], deliveries: ['held:pending'] });
    } finally {
      await other.close();
    }
  });
});
