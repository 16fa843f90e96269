import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import {
  claimErasure,
  type ErasureClaim,
  eraseRound,
  finishErasure,
  merchantsInScope,
} from '../../src/features/erasures/erase-visitor.js';
import { type Caller, failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// erasures.create/get, the `muid` filter and the erasure's use cases through createCaller (the job is
// driven by hand here; test/deletion/erasure.test.ts runs it through HTTP). The statistics are read
// through stats.summary/timeseries/breakdown and compared with the events PostgreSQL still holds.
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

// Two hours of one day, the visitors spread over them with PageViews and Purchases.
const DAY = '2026-11-20';
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

/**
 * The visitor's events stored straight into PostgreSQL with their outbox row, as a process leaves
 * them when it crashes before sending them: claimed until `claimMs` from now, then the recovery's.
 */
async function storeUnsent(merchantId: string, tagId: string, muids: string[], claimMs: number): Promise<void> {
  const events = muids.flatMap((muid) => visitorEvents(muid, `unsent-${randomUUID().slice(0, 8)}`));
  const [range] = await q<{ first: string; last: string }>(sql`
    with ins as (
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select ${merchantId}::uuid, e.id, ${tagId}::uuid, e.muid, e.event_name, e.event_time, e.data::text
      from json_to_recordset(${JSON.stringify(events)}::json) as e(id text, muid text, event_name text, event_time timestamptz, data json)
      returning seq
    )
    select min(seq)::text as first, max(seq)::text as last from ins`);
  await app.deps.db.execute(sql`
    insert into stats_outbox (merchant_id, first_seq, last_seq, claimed_until)
    values (${merchantId}::uuid, ${range!.first}::bigint, ${range!.last}::bigint, now() + make_interval(secs => ${claimMs / 1000}))`);
}

const eventCount = async (merchantId: string, muid?: string) =>
  (
    await q<{ n: number }>(
      sql`select count(*)::int as n from events where merchant_id = ${merchantId}::uuid
        and (${muid ?? null}::text is null or muid = ${muid ?? null})`,
    )
  )[0]?.n ?? 0;

const BREAKDOWNS = ['event_name', 'path', 'utm_source'] as const;

/** What the statistics API answers for a merchant's day: totals, the hours with events, three breakdowns. */
async function statsOf(caller: Caller, merchantId: string) {
  const range = { merchantId, startDate: DAY, endDate: DAY };
  // The fields counted below; the visit metrics have their own tests (test/stats/stats-visits.test.ts).
  const { events, visitors, pageviews, purchases, revenue } = (await caller.stats.summary(range)).totals;
  const totals = { events, visitors, pageviews, purchases, revenue };
  const { points } = await caller.stats.timeseries({ ...range, interval: 'hour' });
  const hours = points
    .filter((point) => point.events > 0)
    .map((point) => ({ hour: point.start.slice(11, 13), events: point.events, visitors: point.visitors }));
  const breakdowns: Record<string, unknown> = {};
  for (const dimension of BREAKDOWNS) {
    const answer = await caller.stats.breakdown({ ...range, dimension, limit: 100 });
    expect(answer.other).toBeNull();
    breakdowns[dimension] = answer.rows.map(({ value, events, visitors }) => ({ value, events, visitors }));
  }
  return { totals, hours, breakdowns };
}

/** The same, counted exactly over the events PostgreSQL holds (the statistics are exact at these sizes). */
async function countedFromEvents(merchantId: string) {
  const events = await q<{ hour: string; event_name: string; muid: string; raw_data: string }>(
    sql`select to_char(event_time at time zone 'UTC', 'HH24') as hour, event_name, muid, raw_data
      from events where merchant_id = ${merchantId}::uuid`,
  );
  const group = (rows: typeof events, key: (row: (typeof events)[number]) => string) => {
    const groups = new Map<string, { events: number; muids: Set<string> }>();
    for (const row of rows) {
      const entry = groups.get(key(row)) ?? { events: 0, muids: new Set<string>() };
      entry.events += 1;
      entry.muids.add(row.muid);
      groups.set(key(row), entry);
    }
    return [...groups].map(([value, g]) => ({ value, events: g.events, visitors: g.muids.size }));
  };
  const largestFirst = (rows: { value: string; events: number; visitors: number }[]) =>
    rows.sort((a, b) => b.events - a.events || (a.value < b.value ? -1 : 1));
  const pageViews = events.filter((e) => e.event_name === 'PageView');
  const purchases = events.filter((e) => e.event_name === 'Purchase');
  const data = (e: (typeof events)[number]) => JSON.parse(e.raw_data) as { path: string; url: string; value: number };
  const amount = purchases.reduce((sum, e) => sum + data(e).value, 0);
  return {
    totals: {
      events: events.length,
      visitors: new Set(events.map((e) => e.muid)).size,
      pageviews: pageViews.length,
      purchases: purchases.length,
      revenue: purchases.length > 0 ? [{ currency: 'EUR', amount: String(amount) }] : [],
    },
    hours: group(events, (e) => e.hour)
      .sort((a, b) => (a.value < b.value ? -1 : 1))
      .map((h) => ({ hour: h.value, events: h.events, visitors: h.visitors })),
    breakdowns: {
      event_name: largestFirst(group(events, (e) => e.event_name)),
      path: largestFirst(group(pageViews, (e) => data(e).path)),
      utm_source: largestFirst(group(pageViews, (e) => new URL(data(e).url).searchParams.get('utm_source') ?? '')),
    },
  };
}

/** The merchant's statistics hold exactly its stored events: totals, hours and every breakdown. */
async function expectStatsMatchEvents(caller: Caller, merchantId: string): Promise<void> {
  expect(await statsOf(caller, merchantId)).toEqual(await countedFromEvents(merchantId));
}

/**
 * Runs every claimable erasure to completion as the job does (jobs/visitor-erasure.ts): `batch`
 * events per round, then the visitor out of the statistics, then completed. Returns the claims run.
 */
async function runErasures(batch = 3): Promise<ErasureClaim[]> {
  const done: ErasureClaim[] = [];
  for (;;) {
    const claim = await claimErasure(app.deps.db, { leaseMs: 60_000, graceMs: 0 });
    if (!claim) return done;
    for (;;) {
      const deleted = await eraseRound(app.deps.db, claim, batch);
      expect(deleted).toBeLessThanOrEqual(batch);
      if (deleted === 0) break;
    }
    const merchants = await merchantsInScope(app.deps.db, claim);
    expect(await app.deps.stats?.forgetVisitor(merchants, claim.muid)).toBe(true);
    expect(await finishErasure(app.deps.db, claim, 0)).toBe(true);
    done.push(claim);
  }
}

describe('erasures.create / erasures.get', () => {
  it('erases one merchant’s visitor: others and other merchants untouched, statistics without it, webhook', async () => {
    const s = await shop();
    const stranger = await shop(1);
    const [m1, m2] = s.merchants as [string, string];
    await ingest(s.tags[0]!, ['v1', 'v2', 'v3']);
    await ingest(s.tags[1]!, ['v1', 'v2']);
    await ingest(stranger.tags[0]!, ['v1', 'v2']);
    // Before: the visitor counts everywhere.
    const m1Before = await statsOf(s.caller, m1);
    expect(m1Before.totals).toMatchObject({ events: 24, visitors: 3, purchases: 12 });
    expect(m1Before.breakdowns.utm_source).toContainEqual({ value: 'v1', events: 4, visitors: 1 });
    const m2Before = await statsOf(s.caller, m2);
    const strangerBefore = await statsOf(stranger.caller, stranger.merchants[0]!);
    await expectStatsMatchEvents(s.caller, m1);

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
    // The visitor is gone from every count and breakdown of m1; the rest of m1 as stored.
    const m1After = await statsOf(s.caller, m1);
    expect(m1After.totals).toEqual({
      events: 16,
      visitors: 2,
      pageviews: 8,
      purchases: 8,
      revenue: [{ currency: 'EUR', amount: '92' }],
    });
    expect(m1After.breakdowns.utm_source).toEqual([
      { value: 'v2', events: 4, visitors: 1 },
      { value: 'v3', events: 4, visitors: 1 },
    ]);
    await expectStatsMatchEvents(s.caller, m1);
    // The partner's other merchant and another partner's merchant with the same muid: untouched.
    expect(await statsOf(s.caller, m2)).toEqual(m2Before);
    expect(await statsOf(stranger.caller, stranger.merchants[0]!)).toEqual(strangerBefore);
    await expectStatsMatchEvents(s.caller, m2);
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

  it('partner-wide: every merchant of the partner loses the visitor, events still on their way included', async () => {
    const s = await shop();
    const [m1, m2] = s.merchants as [string, string];
    await ingest(s.tags[0]!, ['w1', 'w2']);
    // Still in this process's queue when the erasure runs (sent within its flush interval).
    await ingest(s.tags[1]!, ['w1', 'w3']);
    // Left in the outbox by a process that stopped before sending them: the recovery's, once
    // their claim runs out, after the erasure deleted the visitor's events.
    await storeUnsent(m2, s.tags[1]!, ['w1', 'w4'], 2_000);
    const created = await s.caller.erasures.create({ muid: 'w1' });
    expect(created.merchantId).toBeNull();
    await runErasures(5);
    expect(await q(sql`select 1 from stats_outbox where merchant_id in (${m1}::uuid, ${m2}::uuid)`)).toEqual([]);
    expect(await eventCount(m1)).toBe(8);
    expect(await eventCount(m2)).toBe(16);
    for (const m of s.merchants) {
      expect(await eventCount(m, 'w1')).toBe(0);
      await expectStatsMatchEvents(s.caller, m);
      const { breakdowns } = await statsOf(s.caller, m);
      expect((breakdowns.utm_source as { value: string }[]).map((row) => row.value)).not.toContain('w1');
    }
    expect((await statsOf(s.caller, m2)).totals).toMatchObject({ events: 16, visitors: 2 });
    expect(await s.caller.erasures.get({ erasureId: created.id })).toMatchObject({
      status: 'completed',
      eventsDeleted: 24,
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

describe('an erasure beside ingestion', () => {
  it('removes the visitor only: events of others stored meanwhile, in the same hours, all count', async () => {
    const s = await shop(1);
    const m = s.merchants[0]!;
    await ingest(s.tags[0]!, ['gone', 'c0'], 'before');
    await s.caller.erasures.create({ muid: 'gone', merchantId: m });
    let stop = false;
    let batches = 0;
    const ingestion = (async () => {
      for (let i = 0; !stop || i < 3; i++) {
        await ingest(s.tags[0]!, [`c${i % 7}`], `race${i}`);
        batches += 1;
        // A client's pause between batches: in process on PGlite an ingest never waits on I/O,
        // and a loop of them alone would starve the timers and ClickHouse's callbacks.
        await sleep(5);
      }
    })();
    await runErasures(2);
    stop = true;
    await ingestion;
    expect(batches).toBeGreaterThan(3);
    expect(await eventCount(m, 'gone')).toBe(0);
    await expectStatsMatchEvents(s.caller, m);
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
    await expectStatsMatchEvents(s.caller, m1);
    await expectStatsMatchEvents(s.caller, m2);
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
