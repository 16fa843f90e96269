import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { webhookDeliveries, webhookEndpoints, webhookMessages } from '../../src/db/schema/index.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { enqueueWebhookEvent, WEBHOOK_WAKE_CHANNEL } from '../../src/features/webhooks/outbox.js';
import { openTestPglite, uniquePartnerDomain } from '../../src/testing/index.js';

// The outbox on the database the suite runs on (TEST_DATABASE_URL: PostgreSQL; else PGlite).
let database: DatabaseHandle;
let partnerId: string;
let otherPartnerId: string;

beforeAll(async () => {
  const url = process.env.TEST_DATABASE_URL;
  database = url ? await openDatabase({ kind: 'postgres', url }) : await openTestPglite();
  partnerId = (await onboardPartner(database.db, { name: 'a', domain: uniquePartnerDomain() }, 'tags.example.com'))
    .partnerId;
  otherPartnerId = (await onboardPartner(database.db, { name: 'b', domain: uniquePartnerDomain() }, 'tags.example.com'))
    .partnerId;
});
afterAll(() => database?.close());

const endpoint = async (owner: string, events: string[] | null, deleted = false) => {
  const [row] = await database.db
    .insert(webhookEndpoints)
    .values({
      partnerId: owner,
      url: 'https://example.com/hook',
      events,
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      deletedAt: deleted ? new Date() : null,
    })
    .returning({ id: webhookEndpoints.id });
  return row!.id;
};

describe('enqueueWebhookEvent', () => {
  it('writes the message and one pending delivery per matching live endpoint, and wakes listeners', async () => {
    const all = await endpoint(partnerId, null);
    const tagsOnly = await endpoint(partnerId, ['tag.verified', 'tag.activated']);
    await endpoint(partnerId, ['tag.disconnected']);
    await endpoint(partnerId, null, true);
    await endpoint(otherPartnerId, null);
    const woken: string[] = [];
    const unlisten = await database.listen(WEBHOOK_WAKE_CHANNEL, (payload) => woken.push(payload));

    // Read back inside the transaction: what enqueue wrote, before any worker (on a shared test
    // database, another file's) can claim it.
    const { result, message, deliveries } = await database.db.transaction(async (tx) => {
      const result = await enqueueWebhookEvent(tx, { partnerId, type: 'tag.verified', data: { tagId: 'x' } });
      const [message] = await tx.select().from(webhookMessages).where(eq(webhookMessages.id, result.messageId));
      const deliveries = await tx
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.messageId, result.messageId));
      return { result, message, deliveries };
    });
    expect(result.deliveries).toBe(2);
    expect(message).toMatchObject({ partnerId, type: 'tag.verified', data: { tagId: 'x' } });
    expect(deliveries.map((d) => d.endpointId).sort()).toEqual([all, tagsOnly].sort());
    for (const d of deliveries) expect(d).toMatchObject({ status: 'pending', attempts: 0, claimedUntil: null });
    for (let i = 0; i < 100 && woken.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(woken.length).toBeGreaterThan(0);
    await unlisten();
  });

  it('only the named endpoint when endpointId is given, whatever its filter', async () => {
    const target = await endpoint(partnerId, ['tag.disconnected']);
    const result = await enqueueWebhookEvent(database.db, {
      partnerId,
      type: 'webhook.test',
      data: {},
      endpointId: target,
    });
    expect(result.deliveries).toBe(1);
    // Another partner's endpoint id matches nothing.
    const foreign = await endpoint(otherPartnerId, null);
    expect(
      (await enqueueWebhookEvent(database.db, { partnerId, type: 'webhook.test', data: {}, endpointId: foreign }))
        .deliveries,
    ).toBe(0);
  });

  it('rolls back with the caller transaction: no message, no delivery', async () => {
    const before = await database.db.select({ n: sql<number>`count(*)::int` }).from(webhookMessages);
    await expect(
      database.db.transaction(async (tx) => {
        await enqueueWebhookEvent(tx, { partnerId, type: 'tag.activated', data: {} });
        throw new Error('state change failed');
      }),
    ).rejects.toThrow('state change failed');
    const after = await database.db.select({ n: sql<number>`count(*)::int` }).from(webhookMessages);
    expect(after[0]!.n).toBe(before[0]!.n);
  });
});
