import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import {
  claimErasure,
  type ErasureClaim,
  eraseRound,
  finishErasure,
  recountRound,
} from '../../src/features/erasures/erase-visitor.js';
import { DIMENSION_GRAINS, foldAllPendingStats, foldPendingStats, GRAINS } from '../../src/features/stats/fold.js';
import { recountBuckets } from '../../src/features/stats/recount.js';
import { emptyRegisters, mergeInto, registerOf, VisitorUnion } from '../../src/features/stats/sketch.js';
import { type Caller, failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// erasures.create/get, the `muid` filter and the erasure's use cases through createCaller (the job is
// driven by hand here; test/deletion/erasure.test.ts runs it through HTTP).
let app: InProcessApp;
beforeAll(async () => {
  // A long statement deadline keeps the app's own erasure job (its grace) away: the tests run it by hand.
  app = await startInProcessApp({ env: { DB_STATEMENT_TIMEOUT: '60000' } });
});
afterAll(() => app?.close());

const q = async <T = Record<string, unknown>>(query: ReturnType<typeof sql>) =>
  rowsOf<T>(await app.deps.db.execute(query));

interface Shop {
  caller: Caller;
  partnerId: string;
  merchants: string[];
  tags: string[];
}

async function shop(merchantCount = 2): Promise<Shop> {
  const partner = await app.createPartner();
  const caller = app.caller(partner.apiKey);
  const merchants: string[] = [];
  const tags: string[] = [];
  for (let i = 0; i < merchantCount; i++) {
    const { merchantId } = await caller.merchant.create({ name: `Shop ${i}` });
    merchants.push(merchantId);
    tags.push((await caller.tag.generate({ merchantId, domain: partner.domain })).tagId);
  }
  return { caller, partnerId: partner.partnerId, merchants, tags };
}

// Three 15-minute buckets of one day, the visitors spread over them with PageViews and Purchases.
const TIMES = ['2026-11-20T10:01:00Z', '2026-11-20T10:14:59Z', '2026-11-20T10:20:00Z', '2026-11-20T11:05:00Z'];
const visitorEvents = (muid: string, prefix: string) =>
  TIMES.flatMap((time, i) => [
    {
      id: `${prefix}-${muid}-pv${i}`,
      muid,
      event_name: 'PageView',
      event_time: time,
      data: { path: `/p${i % 2}`, url: `https://s.example/p?utm_source=${muid}` },
    },
    {
      id: `${prefix}-${muid}-buy${i}`,
      muid,
      event_name: 'Purchase',
      event_time: time,
      data: { value: 10 + i, currency: 'EUR' },
    },
  ]);

async function ingest(tagId: string, muids: string[], prefix = 'e'): Promise<void> {
  const events = muids.flatMap((muid) => visitorEvents(muid, prefix));
  expect(await app.caller().collect.ingest({ tagId, events })).toEqual({ accepted: events.length });
}

const eventCount = async (merchantId: string, muid?: string) =>
  (
    await q<{ n: number }>(
      sql`select count(*)::int as n from events where merchant_id = ${merchantId}::uuid
        and (${muid ?? null}::text is null or muid = ${muid ?? null})`,
    )
  )[0]?.n ?? 0;

/**
 * The merchant's aggregates next to a recount from its events: per level, bucket and name (and for
 * all names) the count, the exact sketch registers and distinct count, revenue per currency, and
 * PageView counts per path. Throws on a difference.
 */
async function expectAggregatesMatchEvents(merchantId: string): Promise<void> {
  const buckets = await q<{ key: string; events: number; visitors: Uint8Array }>(
    sql`select grain || ' ' || to_char(bucket at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') || ' ' || event_name as key, events::int as events, visitors
      from stat_buckets where merchant_id = ${merchantId}::uuid order by 1`,
  );
  const events = await q<{ t: number; event_name: string; muid: string; raw_data: string }>(
    sql`select (extract(epoch from event_time) * 1000)::float8 as t, event_name, muid, raw_data
      from events where merchant_id = ${merchantId}::uuid`,
  );
  // Every level (fold.ts GRAINS), per name and for all names ('').
  const keysOf = (e: { t: number }, suffix: string, grains: readonly number[] = GRAINS) =>
    grains.map(
      (g) => `${g} ${new Date(Math.floor(e.t / (g * 60_000)) * g * 60_000).toISOString().slice(0, 16)}${suffix}`,
    );
  const expected = new Map<string, { events: number; registers: Uint8Array; muids: Set<string> }>();
  for (const e of events) {
    for (const key of [...keysOf(e, ` ${e.event_name}`), ...keysOf(e, ' ')]) {
      const entry = expected.get(key) ?? { events: 0, registers: emptyRegisters(), muids: new Set<string>() };
      entry.events += 1;
      const register = registerOf(e.muid);
      entry.registers[register >>> 6] = Math.max(entry.registers[register >>> 6]!, register & 63);
      entry.muids.add(e.muid);
      expected.set(key, entry);
    }
  }
  expect(buckets.map((b) => b.key).sort()).toEqual([...expected.keys()].sort());
  for (const b of buckets) {
    const want = expected.get(b.key)!;
    expect(b.events).toBe(want.events);
    const got = emptyRegisters();
    mergeInto(got, new Uint8Array(b.visitors));
    expect(Buffer.from(got).equals(Buffer.from(want.registers))).toBe(true);
    // Sparse at these counts: the distinct count is exact.
    const union = new VisitorUnion();
    union.add(new Uint8Array(b.visitors));
    expect(union.count()).toBe(want.muids.size);
  }
  const revenue = await q<{ key: string; purchases: number; amount: string }>(
    sql`select grain || ' ' || to_char(bucket at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as key, purchases::int as purchases, amount::text as amount
      from stat_revenue where merchant_id = ${merchantId}::uuid order by 1`,
  );
  const wantRevenue = new Map<string, { purchases: number; amount: number }>();
  for (const e of events.filter((x) => x.event_name === 'Purchase')) {
    for (const key of keysOf(e, '')) {
      const entry = wantRevenue.get(key) ?? { purchases: 0, amount: 0 };
      entry.purchases += 1;
      entry.amount += (JSON.parse(e.raw_data) as { value: number }).value;
      wantRevenue.set(key, entry);
    }
  }
  expect(revenue.map((r) => [r.key, r.purchases, Number(r.amount)])).toEqual(
    [...wantRevenue.entries()].sort().map(([key, r]) => [key, r.purchases, r.amount]),
  );
  const paths = await q<{ key: string; events: number }>(
    sql`select grain || ' ' || to_char(bucket at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') || '|' || value as key, events::int as events
      from stat_dimensions where merchant_id = ${merchantId}::uuid and dimension = 'path' order by 1`,
  );
  const wantPaths = new Map<string, number>();
  for (const e of events.filter((x) => x.event_name === 'PageView')) {
    for (const key of keysOf(e, `|${(JSON.parse(e.raw_data) as { path: string }).path}`, DIMENSION_GRAINS)) {
      wantPaths.set(key, (wantPaths.get(key) ?? 0) + 1);
    }
  }
  expect(paths.map((p) => [p.key, p.events])).toEqual([...wantPaths.entries()].sort());
  const sources = await q<{ n: number }>(
    sql`select count(*)::int as n from stat_dimensions where merchant_id = ${merchantId}::uuid and dimension = 'utm_source' and grain = 60`,
  );
  const wantSources = new Set(
    events.filter((x) => x.event_name === 'PageView').map((e) => `${keysOf(e, '', [60])[0]}|${e.muid}`),
  );
  expect(sources[0]?.n).toBe(wantSources.size);
}

/** Runs every claimable erasure to completion, `batch` events per round; returns the claims run. */
async function runErasures(batch = 3): Promise<ErasureClaim[]> {
  const done: ErasureClaim[] = [];
  for (;;) {
    const claim = await claimErasure(app.deps.db, { leaseMs: 60_000, graceMs: 0 });
    if (!claim) return done;
    let folded = false;
    for (;;) {
      const deleted = await eraseRound(app.deps.db, claim, batch);
      expect(deleted).toBeLessThanOrEqual(batch);
      if (deleted > 0) continue;
      const recounted = await recountRound(app.deps.db, claim, !folded);
      folded = true;
      if (recounted === 0) break;
    }
    expect(await finishErasure(app.deps.db, claim, 0)).toBe(true);
    done.push(claim);
  }
}

describe('erasures.create / erasures.get', () => {
  it('erases one merchant’s visitor: others and other merchants untouched, aggregates recounted, webhook', async () => {
    const s = await shop();
    const [m1, m2] = s.merchants as [string, string];
    await ingest(s.tags[0]!, ['v1', 'v2', 'v3']);
    await ingest(s.tags[1]!, ['v1', 'v2']);
    await foldAllPendingStats(app.deps.db);
    const m2Before = await q(
      sql`select bucket, event_name, events, visitors from stat_buckets where merchant_id = ${m2}::uuid order by 1, 2`,
    );

    const created = await s.caller.erasures.create({ muid: 'v1', merchantId: m1 });
    expect(created).toMatchObject({
      muid: 'v1',
      merchantId: m1,
      status: 'pending',
      eventsDeleted: 0,
      completedAt: null,
    });
    expect(await s.caller.erasures.get({ erasureId: created.id })).toEqual(created);

    const claims = await runErasures();
    expect(claims.map((c) => c.id)).toEqual([created.id]);
    expect(await eventCount(m1, 'v1')).toBe(0);
    expect(await eventCount(m1)).toBe(16);
    expect(await eventCount(m2, 'v1')).toBe(8);
    await expectAggregatesMatchEvents(m1);
    await expectAggregatesMatchEvents(m2);
    expect(
      await q(
        sql`select bucket, event_name, events, visitors from stat_buckets where merchant_id = ${m2}::uuid order by 1, 2`,
      ),
    ).toEqual(m2Before);
    // event_day_counts (the list's totals) follow the delete trigger.
    expect((await s.caller.events.list({ merchantId: m1, limit: 1 })).pagination.totalItems).toBe(16);

    const done = await s.caller.erasures.get({ erasureId: created.id });
    expect(done).toMatchObject({ status: 'completed', eventsDeleted: 8 });
    expect(done.completedAt).not.toBeNull();
    const [message] = await q<{ data: unknown }>(
      sql`select data from webhook_messages where type = 'erasure.completed' and partner_id = ${s.partnerId}::uuid`,
    );
    expect(message?.data).toEqual(done);
  });

  it('partner-wide: every merchant of the partner loses the visitor; events still pending are folded right', async () => {
    const s = await shop();
    await ingest(s.tags[0]!, ['w1', 'w2']);
    await ingest(s.tags[1]!, ['w1', 'w3']);
    // Nothing folded yet: the erasure folds first, then recounts.
    const created = await s.caller.erasures.create({ muid: 'w1' });
    expect(created.merchantId).toBeNull();
    await runErasures(5);
    for (const m of s.merchants) {
      expect(await eventCount(m, 'w1')).toBe(0);
      expect(await eventCount(m)).toBe(8);
      await foldAllPendingStats(app.deps.db);
      await expectAggregatesMatchEvents(m);
    }
    expect(await s.caller.erasures.get({ erasureId: created.id })).toMatchObject({
      status: 'completed',
      eventsDeleted: 16,
    });
  });

  it("another partner's erasure and merchant are 404; bad input is 400", async () => {
    const owner = await shop(1);
    const stranger = await shop(1);
    const created = await owner.caller.erasures.create({ muid: 'x1', merchantId: owner.merchants[0]! });
    expect(await failureOf(stranger.caller.erasures.get({ erasureId: created.id }))).toMatchObject({
      status: 404,
      code: 'ERASURE_NOT_FOUND',
    });
    expect(
      await failureOf(stranger.caller.erasures.create({ muid: 'x1', merchantId: owner.merchants[0]! })),
    ).toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND' });
    await owner.caller.merchant.delete({ merchantId: owner.merchants[0]! });
    expect(
      await failureOf(owner.caller.erasures.create({ muid: 'x1', merchantId: owner.merchants[0]! })),
    ).toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND' });
    for (const input of [
      { muid: '' },
      { muid: 'x'.repeat(129) },
      { muid: 'a\u0000b' },
      { muid: 'x', merchantId: 'nope' },
    ]) {
      expect(await failureOf(owner.caller.erasures.create(input))).toMatchObject({
        status: 400,
        code: 'VALIDATION_ERROR',
      });
    }
    expect(
      await failureOf(owner.caller.erasures.create({ muid: 'x', suppress: 'yes' as unknown as boolean })),
    ).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(await failureOf(owner.caller.erasures.get({ erasureId: 'nope' }))).toMatchObject({ status: 400 });
  });
});

describe('recountBuckets', () => {
  it('agrees with the events while ingestion and folds of the same buckets run alongside', async () => {
    const s = await shop(1);
    const m = s.merchants[0]!;
    const buckets = ['2026-11-20T10:00:00Z', '2026-11-20T10:15:00Z', '2026-11-20T11:00:00Z'];
    let stop = false;
    let batches = 0;
    const ingestion = (async () => {
      for (let i = 0; !stop || i < 3; i++) {
        await ingest(s.tags[0]!, [`c${i % 7}`], `race${i}`);
        batches += 1;
      }
    })();
    const folds = (async () => {
      while (!stop) await foldPendingStats(app.deps.db, 50);
    })();
    for (let i = 0; i < 15; i++) await recountBuckets(app.deps.db, m, buckets);
    stop = true;
    await Promise.all([ingestion, folds]);
    await foldAllPendingStats(app.deps.db);
    expect(batches).toBeGreaterThan(3);
    await expectAggregatesMatchEvents(m);
  });
});

describe('suppression', () => {
  it('drops the visitor’s events while the erasure runs, forever with suppress, the collector answering as usual', async () => {
    const s = await shop();
    const [m1, m2] = s.merchants as [string, string];
    await s.caller.erasures.create({ muid: 'gone', merchantId: m1, suppress: true });
    await s.caller.erasures.create({ muid: 'once', merchantId: m1 });
    await ingest(s.tags[0]!, ['gone', 'once', 'kept'], 'a');
    await ingest(s.tags[1]!, ['gone'], 'a');
    expect(await eventCount(m1, 'gone')).toBe(0);
    expect(await eventCount(m1, 'once')).toBe(0);
    expect(await eventCount(m1, 'kept')).toBe(8);
    // Another merchant of the partner: the suppression is merchant-scoped.
    expect(await eventCount(m2, 'gone')).toBe(8);
    await runErasures();
    await ingest(s.tags[0]!, ['gone', 'once'], 'b');
    expect(await eventCount(m1, 'gone')).toBe(0);
    // Without suppress the visitor is collected again once the erasure completed (direct mode: no hold).
    expect(await eventCount(m1, 'once')).toBe(8);
    await foldAllPendingStats(app.deps.db);
    await expectAggregatesMatchEvents(m1);
  });

  it('partner-wide suppression covers every merchant of the partner, not another partner', async () => {
    const s = await shop();
    const other = await shop(1);
    await s.caller.erasures.create({ muid: 'shared-id', suppress: true });
    await ingest(s.tags[0]!, ['shared-id'], 'c');
    await ingest(s.tags[1]!, ['shared-id'], 'c');
    await ingest(other.tags[0]!, ['shared-id'], 'c');
    expect(await eventCount(s.merchants[0]!, 'shared-id')).toBe(0);
    expect(await eventCount(s.merchants[1]!, 'shared-id')).toBe(0);
    expect(await eventCount(other.merchants[0]!, 'shared-id')).toBe(8);
  });
});

describe('events.list({ muid })', () => {
  it("lists one visitor's events with an exact total, cursors bound to the filter", async () => {
    const s = await shop(1);
    const m = s.merchants[0]!;
    await ingest(s.tags[0]!, ['u1', 'u2', 'u3'], 'l');
    const first = await s.caller.events.list({ merchantId: m, muid: 'u2', limit: 5 });
    expect(first.pagination.totalItems).toBe(8);
    expect(first.events.every((e) => e.muid === 'u2')).toBe(true);
    const next = await s.caller.events.list({
      merchantId: m,
      muid: 'u2',
      limit: 5,
      cursor: first.pagination.nextCursor!,
    });
    expect(next.events.map((e) => e.muid)).toEqual(['u2', 'u2', 'u2']);
    expect(new Set([...first.events, ...next.events].map((e) => e.id)).size).toBe(8);
    // A cursor made for one visitor is refused for another (or for none).
    for (const muid of ['u1', undefined]) {
      expect(
        await failureOf(s.caller.events.list({ merchantId: m, muid, limit: 5, cursor: first.pagination.nextCursor! })),
      ).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    }
    const named = await s.caller.events.list({
      merchantId: m,
      muid: 'u3',
      events: 'Purchase,PageView',
      page: 2,
      limit: 3,
    });
    expect(named.pagination.totalItems).toBe(8);
    expect(named.events.map((e) => e.muid)).toEqual(['u3', 'u3', 'u3']);
    const dated = await s.caller.events.list({ merchantId: m, muid: 'u1', startDate: '2026-11-20T10:15:00Z' });
    expect(dated.pagination.totalItems).toBe(4);
    expect((await s.caller.events.list({ merchantId: m, muid: 'nobody' })).pagination.totalItems).toBe(0);
    expect(await failureOf(s.caller.events.list({ merchantId: m, muid: '' }))).toMatchObject({ status: 400 });
  });
});
