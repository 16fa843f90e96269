import { randomUUID } from 'node:crypto';
import type { CollectEvent } from '@partner/shared-schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// collect.ingest and events.list through createCaller: the one ingestion path, then the list's
// filters, sorts, offset pages and cursors. test/collect.test.ts, test/events-*.test.ts: the HTTP side.
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp();
});
afterAll(() => app?.close());

interface Merchant {
  caller: Caller;
  merchantId: string;
  tagId: string;
}

/** A new partner's merchant with a live (preverified) tag holding `events`. */
async function merchantWith(events: CollectEvent[]): Promise<Merchant> {
  const partner = await app.createPartner();
  const caller = app.caller(partner.apiKey);
  const { merchantId } = await caller.merchant.create({ name: 'Shop' });
  const { tagId } = await caller.tag.generate({ merchantId, domain: partner.domain });
  if (events.length > 0)
    expect(await app.caller().collect.ingest({ tagId, events })).toEqual({ accepted: events.length });
  return { caller, merchantId, tagId };
}

const minutes = (count: number, name = 'PageView'): CollectEvent[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `m${String(i).padStart(2, '0')}`,
    event_name: name,
    event_time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  }));

describe('collect.ingest', () => {
  it('stores events readable at once, with exactly the list fields; data kept as raw_data', async () => {
    const m = await merchantWith([
      { id: 'e1', muid: 'u1', event_name: ' Purchase ', event_time: '2026-03-01T12:00:00.123+02:00', data: { v: 4.5 } },
      { id: 'e2', muid: 'u1', event_name: 'PageView', event_time: '2026-03-01' },
    ]);
    expect((await m.caller.events.list({ merchantId: m.merchantId })).events).toEqual([
      {
        id: 'e1',
        muid: 'u1',
        event_name: 'Purchase',
        event_time: '2026-03-01T10:00:00.123Z',
        raw_data: '{"v":4.5}',
        consent: 'not_required',
      },
      {
        id: 'e2',
        muid: 'u1',
        event_name: 'PageView',
        event_time: '2026-03-01T00:00:00.000Z',
        raw_data: '{}',
        consent: 'not_required',
      },
    ]);
  });

  it('assigns an id, a muid and the time of receipt when they are missing', async () => {
    const before = Date.now();
    const m = await merchantWith([{ event_name: 'PageView' }]);
    const [event] = (await m.caller.events.list({ merchantId: m.merchantId })).events;
    expect(event?.id).toEqual(expect.any(String));
    expect(event?.muid).toEqual(expect.any(String));
    expect(Date.parse(event?.event_time as string)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('stores a repeated batch once (ids are per merchant)', async () => {
    const m = await merchantWith(minutes(3));
    expect(await app.caller().collect.ingest({ tagId: m.tagId, events: minutes(3) })).toEqual({ accepted: 3 });
    expect((await m.caller.events.list({ merchantId: m.merchantId })).pagination.totalItems).toBe(3);
    const other = await merchantWith(minutes(3));
    expect((await other.caller.events.list({ merchantId: other.merchantId })).pagination.totalItems).toBe(3);
  });

  it('refuses an unknown tag (404 TAG_NOT_FOUND) and an unverified custom tag (409 TAG_NOT_LIVE)', async () => {
    const missing = randomUUID();
    const unknown = await failureOf(app.caller().collect.ingest({ tagId: missing, events: [{ event_name: 'X' }] }));
    expect(unknown).toMatchObject({ status: 404, code: 'TAG_NOT_FOUND' });
    expect(unknown.message).toContain(missing);
    const m = await merchantWith([]);
    const custom = await m.caller.tag.generate({
      merchantId: m.merchantId,
      domain: `c-${randomUUID().slice(0, 8)}.com`,
    });
    const early = await failureOf(app.caller().collect.ingest({ tagId: custom.tagId, events: [{ event_name: 'X' }] }));
    expect(early).toMatchObject({ status: 409, code: 'TAG_NOT_LIVE' });
  });

  it.each([
    ['no events', []],
    ['501 events', Array.from({ length: 501 }, () => ({ event_name: 'X' }))],
    ['an empty event_name', [{ event_name: ' ' }]],
    ['an impossible event_time', [{ event_name: 'X', event_time: '2026-02-30' }]],
  ])('refuses %s with 400 VALIDATION_ERROR, storing nothing', async (_, events) => {
    const m = await merchantWith([]);
    const failure = await failureOf(app.caller().collect.ingest({ tagId: m.tagId, events }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect((await m.caller.events.list({ merchantId: m.merchantId })).events).toEqual([]);
  });
});

describe('events.list: pages and sorts', () => {
  it('pages 12 by default, newest first, the last page without a cursor', async () => {
    const m = await merchantWith(minutes(15));
    const first = await m.caller.events.list({ merchantId: m.merchantId });
    expect(first.events.map((e) => e.id)).toEqual(
      minutes(15)
        .map((e) => e.id)
        .reverse()
        .slice(0, 12),
    );
    expect(first.pagination).toEqual({
      currentPage: 1,
      itemsPerPage: 12,
      totalItems: 15,
      total: 15,
      totalPages: 2,
      hasNextPage: true,
      hasPreviousPage: false,
      nextCursor: expect.any(String),
    });
    const second = await m.caller.events.list({ merchantId: m.merchantId, page: 2 });
    expect(second.events.map((e) => e.id)).toEqual(['m02', 'm01', 'm00']);
    expect(second.pagination).toMatchObject({ hasNextPage: false, hasPreviousPage: true, nextCursor: null });
  });

  it('sorts by event_name, ties by id, in both orders', async () => {
    const m = await merchantWith([
      { id: 'b', event_name: 'Purchase', event_time: '2026-01-02T00:00:00Z' },
      { id: 'a', event_name: 'Purchase', event_time: '2026-01-02T00:00:00Z' },
      { id: 'c', event_name: 'AddToCart', event_time: '2026-01-03T00:00:00Z' },
    ]);
    const asc = await m.caller.events.list({ merchantId: m.merchantId, sortBy: 'event_name', sortOrder: 'asc' });
    expect(asc.events.map((e) => e.id)).toEqual(['c', 'a', 'b']);
    const desc = await m.caller.events.list({ merchantId: m.merchantId, sortBy: 'event_name', sortOrder: 'desc' });
    expect(desc.events.map((e) => e.id)).toEqual(['b', 'a', 'c']);
  });

  it('walks every event once by cursor, the limit free to change, the same as offset pages', async () => {
    const m = await merchantWith(minutes(25));
    const byOffset = (await m.caller.events.list({ merchantId: m.merchantId, limit: 100 })).events.map((e) => e.id);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    const limits = [7, 3, 10, 10];
    for (const limit of limits) {
      // `page` is ignored once a cursor is given.
      const page = await m.caller.events.list({
        merchantId: m.merchantId,
        limit,
        ...(cursor ? { cursor, page: 9 } : {}),
      });
      seen.push(...page.events.map((e) => e.id));
      cursor = page.pagination.nextCursor;
      if (!cursor) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual(byOffset);
  });
});

describe('events.list: filters', () => {
  const events: CollectEvent[] = [
    { id: 'f1', event_name: 'PageView', event_time: '2026-05-09T23:59:59.999Z' },
    { id: 'f2', event_name: 'PageView', event_time: '2026-05-10T00:00:00.000Z' },
    { id: 'f3', event_name: 'Purchase', event_time: '2026-05-10T12:00:00.000Z' },
    { id: 'f4', event_name: 'AddToCart', event_time: '2026-05-10T23:59:59.999Z' },
    { id: 'f5', event_name: 'Purchase', event_time: '2026-05-11T00:00:00.000Z' },
  ];
  let m: Merchant;
  beforeAll(async () => {
    m = await merchantWith(events);
  });
  const ids = async (query: Record<string, string>) => {
    const page = await m.caller.events.list({ merchantId: m.merchantId, sortOrder: 'asc', ...query });
    expect(page.pagination.totalItems).toBe(page.events.length);
    return page.events.map((e) => e.id);
  };

  it('keeps the named events of a comma list, trimmed, matched exactly', async () => {
    expect(await ids({ events: 'Purchase, PageView,,' })).toEqual(['f1', 'f2', 'f3', 'f5']);
    expect(await ids({ events: 'AddToCart,Purchase' })).toEqual(['f3', 'f4', 'f5']);
    expect(await ids({ events: 'purchase' })).toEqual([]);
  });

  it('bounds by dates inclusively, a date-only endDate covering its whole UTC day', async () => {
    expect(await ids({ startDate: '2026-05-10T00:00:00Z', endDate: '2026-05-10T12:00:00Z' })).toEqual(['f2', 'f3']);
    expect(await ids({ startDate: '2026-05-10', endDate: '2026-05-10' })).toEqual(['f2', 'f3', 'f4']);
    expect(await ids({ startDate: '2026-05-10T14:00:00+02:00', events: 'Purchase' })).toEqual(['f3', 'f5']);
  });

  it('refuses a cursor sent with other filters, and a made-up one: 400 naming cursor', async () => {
    const first = await m.caller.events.list({ merchantId: m.merchantId, events: 'PageView,Purchase', limit: 2 });
    const cursor = first.pagination.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    for (const query of [
      { events: 'Purchase', cursor },
      { events: 'PageView,Purchase', cursor: `${cursor}x` },
    ]) {
      const failure = await failureOf(m.caller.events.list({ merchantId: m.merchantId, ...query }));
      expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
      expect(failure.message).toMatch(/cursor/);
    }
  });

  it.each([
    ['startDate after endDate', { startDate: '2026-05-11', endDate: '2026-05-10' }, 'startDate'],
    ['an impossible date', { startDate: '2026-02-30' }, 'startDate'],
    ['limit=101', { limit: 101 }, 'limit'],
  ])('refuses %s with 400 VALIDATION_ERROR', async (_, query, field) => {
    const failure = await failureOf(m.caller.events.list({ merchantId: m.merchantId, ...query }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(failure.message).toContain(field);
  });
});

describe('events.list: isolation', () => {
  it("answers another partner's merchant, even with events, like a missing one: 404 MERCHANT_NOT_FOUND", async () => {
    const mine = await merchantWith(minutes(1));
    const theirs = await merchantWith(minutes(2, 'Secret'));
    for (const merchantId of [theirs.merchantId, randomUUID()]) {
      const failure = await failureOf(mine.caller.events.list({ merchantId }));
      expect(failure).toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND', trpcCode: 'NOT_FOUND' });
      expect(failure.message).not.toContain('Secret');
    }
    expect((await theirs.caller.events.list({ merchantId: theirs.merchantId })).pagination.totalItems).toBe(2);
  });

  it("refuses one partner's cursor on another partner's merchant without leaking events", async () => {
    const theirs = await merchantWith(minutes(5));
    const { pagination } = await theirs.caller.events.list({ merchantId: theirs.merchantId, limit: 2 });
    const mine = await merchantWith(minutes(5));
    const failure = await failureOf(
      mine.caller.events.list({ merchantId: mine.merchantId, limit: 2, cursor: pagination.nextCursor as string }),
    );
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });
});
