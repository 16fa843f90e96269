import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import {
  claimDeletedMerchant,
  finishPurge,
  type PurgeCounts,
  purgeRound,
} from '../../src/features/merchants/purge-merchant.js';
import { failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// merchant.get/update/delete, tag.delete and the purge's use cases through createCaller
// (test/deletion/ holds the HTTP and two-process side).
let app: InProcessApp;
beforeAll(async () => {
  // A long statement deadline keeps the app's own purge job (its grace) away: the tests purge by hand.
  app = await startInProcessApp({ env: { MAX_MERCHANTS_PER_PARTNER: '2', DB_STATEMENT_TIMEOUT: '60000' } });
});
afterAll(() => app?.close());

async function partner() {
  const created = await app.createPartner();
  return { ...created, caller: app.caller(created.apiKey) };
}

async function eventsOf(merchantId: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await app.deps.db.execute(sql`select count(*)::int as n from events where merchant_id = ${merchantId}::uuid`),
  );
  return row?.n ?? 0;
}

/** Purges every deleted merchant now, in batches of `batch` rows; returns the rounds run. */
async function purgeAll(batch: number): Promise<number> {
  let rounds = 0;
  for (;;) {
    const claim = await claimDeletedMerchant(app.deps.db, { leaseMs: 60_000, graceMs: 0 });
    if (!claim) return rounds;
    for (;;) {
      const counts: PurgeCounts = await purgeRound(app.deps.db, claim, batch);
      rounds += 1;
      if (Object.values(counts).every((n) => n === 0)) break;
      expect(Math.max(...Object.values(counts))).toBeLessThanOrEqual(batch);
    }
    expect(await finishPurge(app.deps.db, claim)).toBe(true);
  }
}

describe('merchant.delete', () => {
  it('frees a place under MAX_MERCHANTS_PER_PARTNER at once and hides the merchant from every read', async () => {
    const { caller } = await partner();
    const a = await caller.merchant.create({ name: 'A' });
    await caller.merchant.create({ name: 'B' });
    expect((await failureOf(caller.merchant.create({ name: 'C' }))).code).toBe('LIMIT_EXCEEDED');
    expect(await caller.merchant.delete({ merchantId: a.merchantId })).toEqual({
      merchantId: a.merchantId,
      deleted: true,
      purge: 'pending',
    });
    await caller.merchant.create({ name: 'C' });
    const { merchants, pagination } = await caller.merchant.list({});
    expect(merchants.map((m) => m.name)).toEqual(['B', 'C']);
    expect(pagination.totalItems).toBe(2);
    for (const call of [
      () => caller.merchant.get({ merchantId: a.merchantId }),
      () => caller.merchant.update({ merchantId: a.merchantId, name: 'x' }),
      () => caller.merchant.delete({ merchantId: a.merchantId }),
      () => caller.events.list({ merchantId: a.merchantId }),
    ]) {
      expect(await failureOf(call())).toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND' });
    }
  });

  it('the purge removes the merchant in bounded rounds, leaves another merchant alone, then merchant.deleted', async () => {
    const { caller, partnerId } = await partner();
    const gone = await caller.merchant.create({ name: 'Gone' });
    const kept = await caller.merchant.create({ name: 'Kept' });
    const domain = (await app.deps.db.execute(
      sql`select domain from partners where id = ${partnerId}::uuid`,
    )) as unknown;
    const partnerDomain = rowsOf<{ domain: string }>(domain)[0]!.domain;
    const tags = [];
    for (const m of [gone, kept]) {
      tags.push(await caller.tag.generate({ merchantId: m.merchantId, domain: partnerDomain }));
    }
    const collector = app.caller();
    for (const [i, tag] of tags.entries()) {
      const events = Array.from({ length: 25 }, (_, n) => ({ id: `e${i}-${n}`, event_name: 'PageView' }));
      await collector.collect.ingest({ tagId: tag.tagId, events });
    }
    const waitFor = async (merchantId: string) => {
      for (let i = 0; i < 200 && (await eventsOf(merchantId)) < 25; i++) await new Promise((r) => setTimeout(r, 20));
    };
    await waitFor(gone.merchantId);
    await waitFor(kept.merchantId);
    await caller.merchant.delete({ merchantId: gone.merchantId });
    // Its tag went with the DELETE: the collector refuses it now.
    expect(
      await failureOf(collector.collect.ingest({ tagId: tags[0]!.tagId, events: [{ event_name: 'X' }] })),
    ).toMatchObject({ status: 404, code: 'TAG_NOT_FOUND' });
    const rounds = await purgeAll(10);
    expect(rounds).toBeGreaterThanOrEqual(3); // 25 events at 10 per statement
    expect(await eventsOf(gone.merchantId)).toBe(0);
    expect(await eventsOf(kept.merchantId)).toBe(25);
    const messages = rowsOf<{ type: string }>(
      await app.deps.db.execute(
        sql`select type from webhook_messages where partner_id = ${partnerId}::uuid and data->>'merchantId' = ${gone.merchantId}`,
      ),
    );
    expect(messages.map((m) => m.type)).toEqual(['merchant.deleted']);
    expect(await purgeAll(10)).toBe(0);
  });
});

describe('tag.delete', () => {
  it('deletes the tag with tag.deleted; the merchant generates a tag for a new domain', async () => {
    const { caller } = await partner();
    const { merchantId } = await caller.merchant.create({ name: 'Mover' });
    const first = await caller.tag.generate({ merchantId, domain: 'old-shop-fast.com' });
    expect(await caller.tag.delete({ tagId: first.tagId })).toEqual({ tagId: first.tagId, deleted: true });
    expect(await failureOf(caller.tag.get({ tagId: first.tagId }))).toMatchObject({ code: 'TAG_NOT_FOUND' });
    expect(await failureOf(caller.tag.delete({ tagId: first.tagId }))).toMatchObject({ code: 'TAG_NOT_FOUND' });
    const moved = await caller.tag.generate({ merchantId, domain: 'new-shop-fast.com' });
    expect(moved).toMatchObject({ domain: 'new-shop-fast.com', message: 'New tag created successfully' });
    expect((await caller.merchant.get({ merchantId })).tags.map((t) => t.hostname)).toEqual(['new-shop-fast.com']);
    const [message] = rowsOf<{ data: { tagId: string; domain: string } }>(
      await app.deps.db.execute(
        sql`select data from webhook_messages where type = 'tag.deleted' and data->>'tagId' = ${first.tagId}`,
      ),
    );
    expect(message?.data).toMatchObject({ tagId: first.tagId, domain: 'old-shop-fast.com' });
  });

  it("another partner's tag is 404 and stays", async () => {
    const owner = await partner();
    const stranger = await partner();
    const { merchantId } = await owner.caller.merchant.create({ name: 'Own' });
    const tag = await owner.caller.tag.generate({ merchantId, domain: 'owned-shop-fast.com' });
    expect(await failureOf(stranger.caller.tag.delete({ tagId: tag.tagId }))).toMatchObject({
      status: 404,
      code: 'TAG_NOT_FOUND',
    });
    expect((await owner.caller.tag.get({ tagId: tag.tagId })).tagId).toBe(tag.tagId);
  });
});
