import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import {
  claimRetention,
  expireRound,
  finishRetention,
  type RetentionClaim,
} from '../../src/features/events/retention/expire-events.js';
import { failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// Retention's rules through createCaller and its use cases: the settings and their validation, the
// effective period (merchant ?? partner ?? server ?? keep), the exact cutoff, what of the statistics
// goes. test/deletion/retention.test.ts runs the job through the real transport.
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp();
});
afterAll(() => app?.close());

async function partner() {
  const created = await app.createPartner();
  return { ...created, caller: app.caller(created.apiKey) };
}

const db = () => app.deps.db;
const DAY = 86_400_000;

/** Events of `merchantId` stored straight (ids `at-<ms>`), at the given event times and receipt times. */
async function storeEvents(merchantId: string, rows: { eventTime: Date; receivedAt?: Date }[]): Promise<void> {
  for (const row of rows) {
    const receivedAt = row.receivedAt ?? new Date();
    await db().execute(sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, received_at)
      values (${merchantId}::uuid, ${`at-${row.eventTime.getTime()}`}, ${randomUUID()}::uuid, 'm1', 'PageView',
        ${row.eventTime.toISOString()}::timestamptz, '{}', ${receivedAt.toISOString()}::timestamptz)`);
    // Its id, as ingestion records it (migration 0028).
    await db().execute(sql`
      insert into event_ids (merchant_id, id, event_time)
      values (${merchantId}::uuid, ${`at-${row.eventTime.getTime()}`}, ${row.eventTime.toISOString()}::timestamptz)`);
  }
}

/** The merchant's ids in event_ids, in event_time order. */
async function storedIds(merchantId: string): Promise<string[]> {
  const rows = rowsOf<{ id: string }>(
    await db().execute(sql`select id from event_ids where merchant_id = ${merchantId}::uuid order by event_time`),
  );
  return rows.map((row) => row.id);
}

async function eventIds(merchantId: string): Promise<string[]> {
  const rows = rowsOf<{ id: string }>(
    await db().execute(sql`select id from events where merchant_id = ${merchantId}::uuid order by event_time`),
  );
  return rows.map((row) => row.id);
}

/** Runs one pass over every merchant due now; returns the claims by merchant (the same merchant once). */
async function passAll(serverDays: number | undefined, batch = 1000): Promise<Map<string, RetentionClaim>> {
  const claims = new Map<string, RetentionClaim>();
  for (;;) {
    const claim = await claimRetention(db(), { leaseMs: 60_000, everyMs: 0, serverDays });
    if (!claim || claims.has(claim.merchantId)) {
      if (claim) await finishRetention(db(), claim);
      return claims;
    }
    claims.set(claim.merchantId, claim);
    for (;;) {
      const { counts } = await expireRound(db(), claim, batch);
      if (Object.values(counts).every((n) => n < batch)) break;
    }
    expect(await finishRetention(db(), claim)).toBe(true);
  }
}

describe('retention settings', () => {
  it('merchant.update sets retentionDays (null inherits); get and list show it', async () => {
    const { caller } = await partner();
    const { merchantId } = await caller.merchant.create({ name: 'Shop' });
    expect((await caller.merchant.get({ merchantId })).retentionDays).toBeNull();
    const updated = await caller.merchant.update({ merchantId, retentionDays: 30 });
    expect(updated).toMatchObject({ merchantId, name: 'Shop', retentionDays: 30 });
    expect((await caller.merchant.list({})).merchants[0]?.retentionDays).toBe(30);
    expect(await caller.merchant.update({ merchantId, name: 'Renamed' })).toMatchObject({
      name: 'Renamed',
      retentionDays: 30,
    });
    expect((await caller.merchant.update({ merchantId, retentionDays: null })).retentionDays).toBeNull();
  });

  it('settings.get/update hold the partner default, one per partner', async () => {
    const a = await partner();
    const b = await partner();
    expect(await a.caller.settings.get()).toEqual({
      defaultRetentionDays: null,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    expect(await a.caller.settings.update({ defaultRetentionDays: 365 })).toEqual({
      defaultRetentionDays: 365,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    expect(await a.caller.settings.get()).toEqual({
      defaultRetentionDays: 365,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    expect(await b.caller.settings.get()).toEqual({
      defaultRetentionDays: null,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    expect(await a.caller.settings.update({ defaultRetentionDays: null })).toEqual({
      defaultRetentionDays: null,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
  });

  it('refuses periods outside 1..3650 whole days and empty updates with 400 VALIDATION_ERROR', async () => {
    const { caller } = await partner();
    const { merchantId } = await caller.merchant.create({ name: 'Shop' });
    for (const retentionDays of [0, -1, 3651, 1.5, '30', true]) {
      const failure = await failureOf(caller.merchant.update({ merchantId, retentionDays } as never));
      expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
      expect(failure.message).toMatch(/retentionDays/);
      const settings = await failureOf(caller.settings.update({ defaultRetentionDays: retentionDays } as never));
      expect(settings).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    }
    expect(await failureOf(caller.merchant.update({ merchantId }))).toMatchObject({ status: 400 });
    expect(await failureOf(caller.settings.update({}))).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(await caller.merchant.update({ merchantId, retentionDays: 3650 })).toMatchObject({ retentionDays: 3650 });
    expect(await caller.merchant.update({ merchantId, retentionDays: 1 })).toMatchObject({ retentionDays: 1 });
  });

  it("another partner's merchant is 404 and keeps its period", async () => {
    const owner = await partner();
    const stranger = await partner();
    const { merchantId } = await owner.caller.merchant.create({ name: 'Own' });
    expect(await failureOf(stranger.caller.merchant.update({ merchantId, retentionDays: 1 }))).toMatchObject({
      status: 404,
      code: 'MERCHANT_NOT_FOUND',
    });
    expect((await owner.caller.merchant.get({ merchantId })).retentionDays).toBeNull();
  });
});

describe('retention pass', () => {
  it('the effective period is merchant ?? partner ?? server ?? keep', async () => {
    const withDefault = await partner();
    const without = await partner();
    await withDefault.caller.settings.update({ defaultRetentionDays: 10 });
    const own = await withDefault.caller.merchant.create({ name: 'own' });
    await withDefault.caller.merchant.update({ merchantId: own.merchantId, retentionDays: 5 });
    const inherits = await withDefault.caller.merchant.create({ name: 'inherits' });
    const serverOnly = await without.caller.merchant.create({ name: 'server' });
    const ownOnly = await without.caller.merchant.create({ name: 'own only' });
    await without.caller.merchant.update({ merchantId: ownOnly.merchantId, retentionDays: 7 });

    const withServer = await passAll(20);
    expect(withServer.get(own.merchantId)?.days).toBe(5);
    expect(withServer.get(inherits.merchantId)?.days).toBe(10);
    expect(withServer.get(serverOnly.merchantId)?.days).toBe(20);
    expect(withServer.get(ownOnly.merchantId)?.days).toBe(7);
    const noServer = await passAll(undefined);
    expect(noServer.has(serverOnly.merchantId)).toBe(false);
    expect(noServer.get(inherits.merchantId)?.days).toBe(10);
  });

  it('a pass is due again after everyMs, or at once after a new period or a new partner default', async () => {
    const p = await partner();
    const { merchantId } = await p.caller.merchant.create({ name: 'due' });
    await p.caller.merchant.update({ merchantId, retentionDays: 3 });
    await passAll(undefined);
    const claimNow = () => claimRetention(db(), { leaseMs: 60_000, everyMs: 3_600_000, serverDays: undefined });
    const claimed = async (): Promise<string[]> => {
      const ids: string[] = [];
      for (let claim = await claimNow(); claim; claim = await claimNow()) {
        ids.push(claim.merchantId);
        await finishRetention(db(), claim);
      }
      return ids;
    };
    expect(await claimed()).not.toContain(merchantId);
    await p.caller.merchant.update({ merchantId, retentionDays: 4 });
    expect(await claimed()).toContain(merchantId);
    await p.caller.merchant.update({ merchantId, retentionDays: null });
    await p.caller.settings.update({ defaultRetentionDays: 6 });
    expect(await claimed()).toContain(merchantId);
    expect(await claimed()).not.toContain(merchantId);
  });

  it('removes exactly the events with event_time before the cutoff, not another merchant’s', async () => {
    const p = await partner();
    const { merchantId } = await p.caller.merchant.create({ name: 'exact' });
    const other = await p.caller.merchant.create({ name: 'other' });
    const cutoff = new Date(Date.now() - 3 * DAY);
    const at = (ms: number) => ({ eventTime: new Date(cutoff.getTime() + ms) });
    await storeEvents(merchantId, [at(-DAY), at(-1), at(0), at(1), at(DAY)]);
    await storeEvents(other.merchantId, [at(-DAY), at(-1)]);
    const claim: RetentionClaim = {
      merchantId,
      days: 3,
      startedAt: new Date(cutoff.getTime() + 3 * DAY).toISOString(),
      cutoff: cutoff.toISOString(),
      lease: 'by hand',
    };
    expect((await expireRound(db(), claim, 1000)).counts.events).toBe(2);
    expect(await eventIds(merchantId)).toEqual([0, 1, DAY].map((ms) => `at-${cutoff.getTime() + ms}`));
    expect(await eventIds(other.merchantId)).toHaveLength(2);
    // Each event's id went with it (a retry of it is stored again); the others' stay.
    expect(await storedIds(merchantId)).toEqual(await eventIds(merchantId));
    expect(await storedIds(other.merchantId)).toHaveLength(2);
    // The list's totals (event_day_counts, kept by the delete trigger) agree.
    const listed = await p.caller.events.list({ merchantId, startDate: '2000-01-01' });
    expect(listed.pagination).toMatchObject({ totalItems: 3 });
  });

  it('deletes in bounded batches; events dated ahead go once received before the cutoff', async () => {
    const p = await partner();
    const { merchantId } = await p.caller.merchant.create({ name: 'batches' });
    await p.caller.merchant.update({ merchantId, retentionDays: 2 });
    const old = Array.from({ length: 25 }, (_, i) => ({ eventTime: new Date(Date.now() - 5 * DAY - i * 1000) }));
    const future = new Date(Date.now() + 30 * DAY);
    await storeEvents(merchantId, [
      ...old,
      { eventTime: future, receivedAt: new Date(Date.now() - 3 * DAY) },
      { eventTime: new Date(future.getTime() + 1), receivedAt: new Date() },
      { eventTime: new Date(Date.now() - DAY) },
    ]);
    const claims = await passAll(undefined, 10);
    expect(claims.get(merchantId)?.days).toBe(2);
    const left = await eventIds(merchantId);
    expect(left).toHaveLength(2);
    expect(left).toContain(`at-${future.getTime() + 1}`);
  });

  it('removes the statistics of the expired events, future-dated ones received before the cutoff too', async () => {
    const p = await partner();
    const { merchantId } = await p.caller.merchant.create({ name: 'stats' });
    const other = await p.caller.merchant.create({ name: 'stats other' });
    const cutoff = Date.parse('2026-01-10T12:07:00.000Z');
    // Dated before the cutoff (gone), from it on (kept), and ahead of the pass: one received before
    // the cutoff (gone), one received since (kept).
    const times = {
      gone: ['2026-01-10T11:30:00.000Z', '2026-01-10T11:45:00.000Z', '2026-01-10T12:06:59.999Z'],
      kept: ['2026-01-10T12:07:00.000Z', '2026-01-10T12:15:00.000Z', '2026-01-10T13:00:00.000Z'],
      aheadGone: '2026-03-01T10:00:00.000Z',
      aheadKept: '2026-03-02T10:00:00.000Z',
    };
    const events = (merchant: string) =>
      [
        ...times.gone.map((time, i) => ({ id: `gone-${i}`, muid: `g${i}`, time, path: `/old${i}` })),
        ...times.kept.map((time, i) => ({ id: `kept-${i}`, muid: `k${i}`, time, path: `/new${i}` })),
        { id: 'ahead-gone', muid: 'ag', time: times.aheadGone, path: '/ahead' },
        { id: 'ahead-kept', muid: 'ak', time: times.aheadKept, path: '/ahead' },
      ].flatMap((e) => [
        {
          id: `${merchant}-${e.id}-pv`,
          muid: e.muid,
          event_name: 'PageView',
          event_time: e.time,
          data: { path: e.path },
        },
        {
          id: `${merchant}-${e.id}-buy`,
          muid: e.muid,
          event_name: 'Purchase',
          event_time: e.time,
          data: { value: 5, currency: 'EUR' },
        },
      ]);
    for (const id of [merchantId, other.merchantId]) {
      const { tagId } = await p.caller.tag.generate({ merchantId: id, domain: p.domain });
      const sent = events(id);
      expect(await app.caller().collect.ingest({ tagId, events: sent })).toEqual({ accepted: sent.length });
      await db().execute(sql`update events set received_at = ${new Date(cutoff - DAY).toISOString()}::timestamptz
        where merchant_id = ${id}::uuid and id like '%-ahead-gone-%'`);
    }
    const stats = async (id: string) => {
      const range = (startDate: string, endDate: string) => ({ merchantId: id, startDate, endDate });
      return {
        day: (await p.caller.stats.summary(range('2026-01-10', '2026-01-10'))).totals,
        hours: (await p.caller.stats.timeseries({ ...range('2026-01-10', '2026-01-10'), interval: 'hour' })).points
          .filter((point) => point.events > 0)
          .map((point) => [point.start.slice(11, 16), point.events, point.visitors]),
        paths: (await p.caller.stats.breakdown({ ...range('2026-01-10', '2026-03-02'), dimension: 'path' })).rows,
        ahead: (await p.caller.stats.summary(range('2026-03-01', '2026-03-02'))).totals,
      };
    };
    const totals = (n: number) => ({
      events: 2 * n,
      visitors: n,
      pageviews: n,
      purchases: n,
      revenue: [{ currency: 'EUR', amount: String(5 * n) }],
    });
    const before = await stats(merchantId);
    expect(before.day).toMatchObject(totals(6));
    expect(before.ahead).toMatchObject(totals(2));
    const otherBefore = await stats(other.merchantId);
    expect(otherBefore).toEqual(before);

    // One pass by hand, as jobs/event-retention.ts runs it: the rounds, the statistics of the
    // future-dated events they removed, then those dated before the cutoff.
    const claim: RetentionClaim = {
      merchantId,
      days: 1,
      startedAt: new Date(cutoff + DAY).toISOString(),
      cutoff: new Date(cutoff).toISOString(),
      lease: 'by hand',
    };
    const round = await expireRound(db(), claim, 1000);
    expect(round.counts).toEqual({ events: 6, future_dated: 2 });
    expect(round.futureSeqs).toHaveLength(2);
    await app.deps.stats?.forgetSeqs(merchantId, round.futureSeqs);
    await app.deps.stats?.expireBefore(merchantId, new Date(claim.cutoff));

    const after = await stats(merchantId);
    expect(after.day).toMatchObject(totals(3));
    expect(after.hours).toEqual([
      ['12:00', 4, 2],
      ['13:00', 2, 1],
    ]);
    expect(after.paths.map((row) => row.value).sort()).toEqual(['/ahead', '/new0', '/new1', '/new2']);
    expect(after.paths.find((row) => row.value === '/ahead')).toMatchObject({ events: 1, visitors: 1 });
    expect(after.ahead).toMatchObject(totals(1));
    // Another merchant's statistics of the same times stay.
    expect(await stats(other.merchantId)).toEqual(otherBefore);
  });
});
