import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import type { Json } from './helpers/api.js';
import {
  allEvents,
  collectOk,
  createMerchant,
  type GeneratedTag,
  generateTag,
  listEvents,
  MISSING_ID,
  preverifiedTag,
  type SentEvent,
} from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** A merchant with a live (preverified) tag holding the given events. */
async function merchantWith(events: SentEvent[]): Promise<GeneratedTag> {
  const tag = await preverifiedTag(server);
  for (let i = 0; i < events.length; i += 500) await collectOk(server, tag.tagId, events.slice(i, i + 500));
  return tag;
}

const ids = (res: { body: Json }): string[] => res.body.events.map((e: Json) => e.id);

describe('GET /v1/partners/events: shape and defaults', () => {
  it('returns events with exactly id, muid, event_name, event_time, raw_data and consent', async () => {
    const tag = await merchantWith([
      {
        id: 'e1',
        muid: 'user-1',
        event_name: 'Purchase',
        event_time: '2026-03-01T10:00:00.123Z',
        data: { value: 42.5, currency: 'EUR', items: [{ sku: 'A' }] },
      },
      { id: 'e2', muid: 'user-1', event_name: 'PageView', event_time: '2026-03-01T09:00:00Z' },
    ]);
    const res = await listEvents(server, tag.merchantId);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['events', 'pagination']);
    for (const event of res.body.events) {
      expect(Object.keys(event).sort()).toEqual(['consent', 'event_name', 'event_time', 'id', 'muid', 'raw_data']);
    }
    expect(res.body.events).toEqual([
      {
        id: 'e1',
        muid: 'user-1',
        event_name: 'Purchase',
        event_time: '2026-03-01T10:00:00.123Z',
        raw_data: JSON.stringify({ value: 42.5, currency: 'EUR', items: [{ sku: 'A' }] }),
        consent: 'not_required',
      },
      {
        id: 'e2',
        muid: 'user-1',
        event_name: 'PageView',
        event_time: '2026-03-01T09:00:00.000Z',
        raw_data: '{}',
        consent: 'not_required',
      },
    ]);
    expect(JSON.parse(res.body.events[0].raw_data)).toEqual({ value: 42.5, currency: 'EUR', items: [{ sku: 'A' }] });
  });

  it('pages 12 events by default, newest first, with total equal to totalItems', async () => {
    const events = Array.from({ length: 15 }, (_, i) => ({
      id: `d${String(i).padStart(2, '0')}`,
      event_name: 'PageView',
      event_time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    }));
    const tag = await merchantWith(events);
    const first = await listEvents(server, tag.merchantId);
    expect(first.status).toBe(200);
    expect(ids(first)).toEqual(
      events
        .map((e) => e.id)
        .reverse()
        .slice(0, 12),
    );
    expect(first.body.pagination).toEqual({
      currentPage: 1,
      itemsPerPage: 12,
      totalItems: 15,
      total: 15,
      totalPages: 2,
      hasNextPage: true,
      hasPreviousPage: false,
      nextCursor: expect.any(String),
    });
    const second = await listEvents(server, tag.merchantId, { page: 2 });
    expect(ids(second)).toEqual(['d02', 'd01', 'd00']);
    expect(second.body.pagination).toMatchObject({
      currentPage: 2,
      hasNextPage: false,
      hasPreviousPage: true,
      nextCursor: null,
    });
    expect(second.body.pagination.total).toBe(second.body.pagination.totalItems);
  });

  it('answers an empty page with zero totals for a merchant whose tag has no events yet', async () => {
    const tag = await generateTag(server); // custom, not verified: takes no events
    const res = await listEvents(server, tag.merchantId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      events: [],
      pagination: {
        currentPage: 1,
        itemsPerPage: 12,
        totalItems: 0,
        total: 0,
        totalPages: 0,
        hasNextPage: false,
        hasPreviousPage: false,
        nextCursor: null,
      },
    });
  });

  it('accepts limit 1 and 100', async () => {
    const tag = await merchantWith(Array.from({ length: 3 }, () => ({ event_name: 'PageView' })));
    const one = await listEvents(server, tag.merchantId, { limit: 1 });
    expect(one.status).toBe(200);
    expect(one.body.events).toHaveLength(1);
    expect(one.body.pagination).toMatchObject({ itemsPerPage: 1, totalItems: 3, totalPages: 3 });
    const hundred = await listEvents(server, tag.merchantId, { limit: 100 });
    expect(hundred.status).toBe(200);
    expect(hundred.body.events).toHaveLength(3);
    expect(hundred.body.pagination.itemsPerPage).toBe(100);
  });
});

describe('GET /v1/partners/events: sorting', () => {
  const events: SentEvent[] = [
    { id: 's1', event_name: 'Search', event_time: '2026-02-01T00:00:03Z' },
    { id: 's2', event_name: 'AddToCart', event_time: '2026-02-01T00:00:01Z' },
    { id: 's3', event_name: 'Purchase', event_time: '2026-02-01T00:00:04Z' },
    { id: 's4', event_name: 'Login', event_time: '2026-02-01T00:00:02Z' },
  ];
  let tag: GeneratedTag;
  beforeAll(async () => {
    tag = await merchantWith(events);
  });

  it.each([
    [{}, ['s3', 's1', 's4', 's2']],
    [{ sortOrder: 'desc' }, ['s3', 's1', 's4', 's2']],
    [{ sortOrder: 'asc' }, ['s2', 's4', 's1', 's3']],
    [{ sortBy: 'event_time', sortOrder: 'asc' }, ['s2', 's4', 's1', 's3']],
    [{ sortBy: 'event_name' }, ['s1', 's3', 's4', 's2']],
    [{ sortBy: 'event_name', sortOrder: 'asc' }, ['s2', 's4', 's3', 's1']],
    [{ sortBy: 'event_name', sortOrder: 'desc' }, ['s1', 's3', 's4', 's2']],
  ])('sorts by %o', async (query, expected) => {
    const res = await listEvents(server, tag.merchantId, query as Record<string, string>);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(expected);
  });

  it.each([
    ['sortBy=muid', { sortBy: 'muid' }],
    ['sortBy=EVENT_TIME', { sortBy: 'EVENT_TIME' }],
    ['sortOrder=up', { sortOrder: 'up' }],
    ['sortOrder=', { sortOrder: '' }],
  ])('rejects %s with 400 VALIDATION_ERROR', async (_, query) => {
    const res = await listEvents(server, tag.merchantId, query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(Object.keys(query)[0]!) });
  });

  it.each([
    ['event_time', 'desc'],
    ['event_time', 'asc'],
    ['event_name', 'asc'],
    ['event_name', 'desc'],
  ])('pages through 30 events with equal times (sortBy=%s, %s) without gaps or repeats', async (sortBy, sortOrder) => {
    const time = '2026-04-01T12:00:00.000Z';
    const tied = await merchantWith(
      Array.from({ length: 30 }, (_, i) => ({ id: `tie-${i}`, event_name: 'PageView', event_time: time })),
    );
    const seen = await allEvents(server, tied.merchantId, { limit: 7, sortBy, sortOrder });
    const seenIds = seen.map((e) => e.id);
    expect(seenIds).toHaveLength(30);
    expect(new Set(seenIds).size).toBe(30);
    expect([...seenIds].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `tie-${i}`).sort());
    // And the same order when asked again.
    expect((await allEvents(server, tied.merchantId, { limit: 7, sortBy, sortOrder })).map((e) => e.id)).toEqual(
      seenIds,
    );
  });
});

describe('GET /v1/partners/events: filters', () => {
  const events: SentEvent[] = [
    { id: 'f1', event_name: 'PageView', event_time: '2026-05-09T23:59:59.999Z' },
    { id: 'f2', event_name: 'PageView', event_time: '2026-05-10T00:00:00.000Z' },
    { id: 'f3', event_name: 'Purchase', event_time: '2026-05-10T12:00:00.000Z' },
    { id: 'f4', event_name: 'AddToCart', event_time: '2026-05-10T23:59:59.999Z' },
    { id: 'f5', event_name: 'Purchase', event_time: '2026-05-11T00:00:00.000Z' },
    { id: 'f6', event_name: 'Signup Completed', event_time: '2026-05-12T08:00:00.000Z' },
  ];
  let tag: GeneratedTag;
  beforeAll(async () => {
    tag = await merchantWith(events);
  });

  async function filtered(query: Record<string, string>): Promise<string[]> {
    const res = await listEvents(server, tag.merchantId, { sortOrder: 'asc', ...query });
    expect(res.status).toBe(200);
    expect(res.body.pagination.totalItems).toBe(res.body.events.length);
    return ids(res);
  }

  it('keeps the listed event names, trimmed, ignoring empty entries', async () => {
    expect(await filtered({ events: 'Purchase, PageView,,' })).toEqual(['f1', 'f2', 'f3', 'f5']);
    expect(await filtered({ events: 'AddToCart' })).toEqual(['f4']);
    expect(await filtered({ events: ' Signup Completed ' })).toEqual(['f6']);
  });

  it('sends the comma list through the query string as written', async () => {
    const url = `${server.url}/v1/partners/events?merchantId=${tag.merchantId}&sortOrder=asc&events=Purchase,%20PageView,,`;
    const raw = await fetch(url, { headers: { authorization: `Bearer ${server.partner.apiKey}` } });
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as Json).events.map((e: Json) => e.id)).toEqual(['f1', 'f2', 'f3', 'f5']);
  });

  it('treats an events list of only commas as no filter, and an unknown name as no match', async () => {
    expect(await filtered({ events: ',, ,' })).toEqual(['f1', 'f2', 'f3', 'f4', 'f5', 'f6']);
    expect(await filtered({ events: 'Logout' })).toEqual([]);
    // Names match exactly.
    expect(await filtered({ events: 'purchase' })).toEqual([]);
  });

  it('includes events exactly at startDate and endDate', async () => {
    expect(await filtered({ startDate: '2026-05-10T00:00:00.000Z', endDate: '2026-05-10T12:00:00.000Z' })).toEqual([
      'f2',
      'f3',
    ]);
    expect(await filtered({ startDate: '2026-05-10T12:00:00Z', endDate: '2026-05-10T12:00:00Z' })).toEqual(['f3']);
  });

  it('reads a date-only endDate as the whole UTC day and a date-only startDate from midnight', async () => {
    expect(await filtered({ endDate: '2026-05-10' })).toEqual(['f1', 'f2', 'f3', 'f4']);
    expect(await filtered({ startDate: '2026-05-10' })).toEqual(['f2', 'f3', 'f4', 'f5', 'f6']);
    expect(await filtered({ startDate: '2026-05-10', endDate: '2026-05-10' })).toEqual(['f2', 'f3', 'f4']);
  });

  it('honours UTC offsets in the bounds', async () => {
    // 2026-05-10T14:00+02:00 is 12:00Z.
    expect(await filtered({ startDate: '2026-05-10T14:00:00+02:00', endDate: '2026-05-11T02:00:00+02:00' })).toEqual([
      'f3',
      'f4',
      'f5',
    ]);
  });

  it('combines names, dates, sorting and paging', async () => {
    const res = await listEvents(server, tag.merchantId, {
      events: 'PageView,Purchase',
      startDate: '2026-05-10',
      endDate: '2026-05-11',
      sortBy: 'event_name',
      sortOrder: 'asc',
      limit: 2,
      page: 1,
    });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(['f2', 'f3']);
    expect(res.body.pagination).toMatchObject({ totalItems: 3, total: 3, totalPages: 2, hasNextPage: true });
  });

  it.each([
    ['startDate after endDate', { startDate: '2026-05-11', endDate: '2026-05-10' }, 'startDate'],
    ['an unparseable startDate', { startDate: 'yesterday' }, 'startDate'],
    ['an unparseable endDate', { endDate: '10/05/2026' }, 'endDate'],
    ['an impossible date', { startDate: '2026-02-30' }, 'startDate'],
    ['an impossible time', { endDate: '2026-05-10T25:00:00Z' }, 'endDate'],
    ['an empty startDate', { startDate: '' }, 'startDate'],
    ['page=0', { page: '0' }, 'page'],
    ['page=1.5', { page: '1.5' }, 'page'],
    ['limit=0', { limit: '0' }, 'limit'],
    ['limit=101', { limit: '101' }, 'limit'],
    ['limit=abc', { limit: 'abc' }, 'limit'],
  ])('rejects %s with 400 VALIDATION_ERROR', async (_, query, param) => {
    const res = await listEvents(server, tag.merchantId, query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(param) });
  });
});

describe('GET /v1/partners/events: merchant lookup', () => {
  it('answers 404 MERCHANT_NOT_FOUND for an unknown merchant', async () => {
    const res = await listEvents(server, MISSING_ID);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'MERCHANT_NOT_FOUND', message: expect.stringContaining(MISSING_ID) });
  });

  it("answers 404 MERCHANT_NOT_FOUND for another partner's merchant, even one with events", async () => {
    const other = await server.createPartner();
    const theirs = await preverifiedTag(server, other);
    await collectOk(server, theirs.tagId, [{ event_name: 'PageView' }]);
    const res = await listEvents(server, theirs.merchantId);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('MERCHANT_NOT_FOUND');
    expect(res.text).not.toContain('PageView');
  });

  it('answers 404 MERCHANT_NOT_FOUND for a merchant without a tag', async () => {
    const merchantId = await createMerchant(server);
    const res = await listEvents(server, merchantId);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('MERCHANT_NOT_FOUND');
  });

  it.each([
    ['missing', undefined],
    ['not a UUID', 'merchant-1'],
  ])('answers 400 for a merchantId that is %s', async (_, merchantId) => {
    const query = merchantId === undefined ? '' : `?merchantId=${merchantId}`;
    const res = await fetch(`${server.url}/v1/partners/events${query}`, {
      headers: { authorization: `Bearer ${server.partner.apiKey}` },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('merchantId') });
  });
});
