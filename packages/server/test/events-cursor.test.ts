import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import { collectOk, type GeneratedTag, listEvents, preverifiedTag, type SentEvent } from './helpers/fixtures.js';

// Cursor pagination of GET /v1/partners/events (and over tRPC): every sort and filter, stable
// while another process inserts, bound to its filters and partner.
let server: TestServer;
let tag: GeneratedTag;
const NAMES = ['PageView', 'Purchase', 'AddToCart', 'Search'];
// 90 events over three UTC days, with many equal times (ties broken by id) and uneven names.
const EVENTS: SentEvent[] = Array.from({ length: 90 }, (_, i) => ({
  id: `ev-${String((i * 37) % 90).padStart(2, '0')}`,
  event_name: NAMES[i % 7 < 3 ? 0 : ((i % 4) as 0 | 1 | 2 | 3)] as string,
  event_time: new Date(Date.UTC(2026, 2, 1 + (i % 3), 10, i % 5)).toISOString(),
}));

beforeAll(async () => {
  server = await startTestServer();
  tag = await preverifiedTag(server);
  await collectOk(server, tag.tagId, EVENTS);
});
afterAll(() => server?.close());

type Query = Record<string, string | number>;

/** Every event of the listing by offset pages of 100 (the reference order). */
async function byOffset(query: Query): Promise<string[]> {
  const res = await listEvents(server, tag.merchantId, { ...query, limit: 100 });
  expect(res.status).toBe(200);
  expect(res.body.pagination.nextCursor).toBeNull();
  return res.body.events.map((e: Json) => e.id);
}

/** Walks the listing by cursor; checks each page's pagination on the way. */
async function byCursor(query: Query, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let total: number | null = null;
  do {
    const res: { status: number; body: Json } = await listEvents(server, tag.merchantId, {
      ...query,
      limit,
      ...(cursor ? { cursor } : {}),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages++;
    const { pagination } = res.body;
    expect(pagination.currentPage).toBe(pages);
    total ??= pagination.totalItems;
    expect(pagination.totalItems).toBe(total);
    expect(pagination.hasNextPage).toBe(pagination.nextCursor !== null);
    ids.push(...res.body.events.map((e: Json) => e.id));
    cursor = pagination.nextCursor;
    if (pages > 200) throw new Error('cursor walk does not end');
  } while (cursor);
  expect(ids).toHaveLength(total ?? -1);
  return { ids, pages };
}

const FILTERS: [string, Query][] = [
  ['no filter', {}],
  ['one name', { events: 'PageView' }],
  ['two names', { events: 'Purchase,PageView' }],
  [
    'three names and a range with partial days',
    { events: 'Search,AddToCart,PageView', startDate: '2026-03-01T10:02:00Z', endDate: '2026-03-03T10:01:00Z' },
  ],
  ['a date range', { startDate: '2026-03-02', endDate: '2026-03-03' }],
];
const SORTS: Query[] = [
  { sortBy: 'event_time', sortOrder: 'desc' },
  { sortBy: 'event_time', sortOrder: 'asc' },
  { sortBy: 'event_name', sortOrder: 'asc' },
  { sortBy: 'event_name', sortOrder: 'desc' },
];

describe('GET /v1/partners/events?cursor=', () => {
  for (const [label, filter] of FILTERS) {
    it(`walks ${label} in every sort: the same events in the same order as offset pages`, async () => {
      for (const sort of SORTS) {
        const query = { ...filter, ...sort };
        const expected = await byOffset(query);
        expect(expected.length).toBeGreaterThan(0);
        const walked = await byCursor(query, 7);
        expect(walked.ids, JSON.stringify(query)).toEqual(expected);
        expect(walked.pages).toBe(Math.max(1, Math.ceil(expected.length / 7)));
      }
    });
  }

  it('lets the limit change between pages and ignores page when a cursor is given', async () => {
    const expected = await byOffset({});
    const first = await listEvents(server, tag.merchantId, { limit: 5 });
    const second = await listEvents(server, tag.merchantId, {
      limit: 20,
      page: 9,
      cursor: first.body.pagination.nextCursor,
    });
    expect(second.status).toBe(200);
    expect(second.body.pagination.currentPage).toBe(2);
    expect(second.body.events.map((e: Json) => e.id)).toEqual(expected.slice(5, 25));
  });

  it('gives a cursor on offset pages too, continuing after that page', async () => {
    const expected = await byOffset({ sortBy: 'event_name' });
    const third = await listEvents(server, tag.merchantId, { sortBy: 'event_name', limit: 10, page: 3 });
    const next = await listEvents(server, tag.merchantId, {
      sortBy: 'event_name',
      limit: 10,
      cursor: third.body.pagination.nextCursor,
    });
    expect(next.body.pagination.currentPage).toBe(4);
    expect(next.body.events.map((e: Json) => e.id)).toEqual(expected.slice(30, 40));
  });

  it('sends the next page as a Link header (rel="next"): followed as given, it walks the same events', async () => {
    const query = { events: 'Search,AddToCart,PageView', startDate: '2026-03-01T10:02:00Z', sortBy: 'event_name' };
    const expected = await byOffset(query);
    const ids: string[] = [];
    let path: string | null =
      `/v1/partners/events?${new URLSearchParams({ merchantId: tag.merchantId, ...query, limit: '7' })}`;
    let pages = 0;
    while (path) {
      const res = await api(server, server.partner.apiKey).get(path);
      expect(res.status, res.text).toBe(200);
      ids.push(...res.body.events.map((e: Json) => e.id));
      const link = res.headers.get('link');
      const { nextCursor } = res.body.pagination;
      if (nextCursor === null) {
        expect(link).toBeNull();
        path = null;
      } else {
        const match = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
        expect(match, String(link)).not.toBeNull();
        const next = new URL(match?.[1] ?? '', 'http://api.test');
        // Commas are encoded: the header splits safely into link-values.
        expect(match?.[1]).not.toContain(',');
        expect(next.pathname).toBe('/v1/partners/events');
        expect(next.searchParams.get('cursor')).toBe(nextCursor);
        expect(next.searchParams.get('events')).toBe(query.events);
        expect(next.searchParams.has('page')).toBe(false);
        path = `${next.pathname}${next.search}`;
      }
      if (++pages > 50) throw new Error('link walk does not end');
    }
    expect(ids).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 7));
  });

  it('serves cursors over tRPC as over REST', async () => {
    const caller = server.caller(server.partner.apiKey);
    const first = await caller.events.list({ merchantId: tag.merchantId, limit: 30 });
    const rest = await listEvents(server, tag.merchantId, { limit: 30 });
    expect(first.pagination.nextCursor).toBe(rest.body.pagination.nextCursor);
    const second = await caller.events.list({
      merchantId: tag.merchantId,
      limit: 30,
      cursor: first.pagination.nextCursor as string,
    });
    const expected = await byOffset({});
    expect(second.events.map((e) => e.id)).toEqual(expected.slice(30, 60));
  });
});

describe('cursors are bound to their list and partner', () => {
  const refused = (res: { status: number; body: Json }) => {
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toMatch(/cursor/);
  };
  let cursor: string;
  beforeAll(async () => {
    const res = await listEvents(server, tag.merchantId, { events: 'PageView', startDate: '2026-03-01', limit: 5 });
    cursor = res.body.pagination.nextCursor;
    expect(cursor).toEqual(expect.any(String));
  });

  it('refuses a cursor sent with other filters or another sort', async () => {
    const base = { events: 'PageView', startDate: '2026-03-01', limit: 5, cursor };
    expect((await listEvents(server, tag.merchantId, base)).status).toBe(200);
    // The same filters written differently are the same list.
    expect((await listEvents(server, tag.merchantId, { ...base, events: ' PageView,PageView' })).status).toBe(200);
    for (const other of <Query[]>[
      { events: 'Purchase' },
      { events: 'PageView,Purchase' },
      { startDate: '2026-03-02' },
      { endDate: '2026-03-09' },
      { sortOrder: 'asc' },
      { sortBy: 'event_name' },
    ]) {
      refused(await listEvents(server, tag.merchantId, { ...base, ...other }));
    }
    const { events: _names, ...withoutNames } = base;
    refused(await listEvents(server, tag.merchantId, withoutNames));
  });

  it('refuses a cursor for another merchant or another partner', async () => {
    const mine = await preverifiedTag(server);
    refused(await listEvents(server, mine.merchantId, { events: 'PageView', startDate: '2026-03-01', cursor }));
    const other = await server.createPartner();
    // The other partner's key on the same merchant: the cursor check comes first, and no data leaks.
    const res = await listEvents(
      server,
      tag.merchantId,
      { events: 'PageView', startDate: '2026-03-01', cursor },
      other.apiKey,
    );
    expect([400, 404]).toContain(res.status);
    expect(res.body.events).toBeUndefined();
  });

  it('refuses altered, truncated and made-up cursors', async () => {
    const [payload, mac] = cursor.split('.') as [string, string];
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString());
    fields[3] = 'ev-00';
    const forged = `${Buffer.from(JSON.stringify(fields)).toString('base64url')}.${mac}`;
    const flipped = `${payload}.${mac.startsWith('A') ? `B${mac.slice(1)}` : `A${mac.slice(1)}`}`;
    for (const bad of [forged, flipped, payload, cursor.slice(0, -3), 'x', '.', `${cursor}.x`, 'a'.repeat(1025)]) {
      refused(await listEvents(server, tag.merchantId, { events: 'PageView', startDate: '2026-03-01', cursor: bad }));
    }
  });
});

describe('a cursor walk while another process inserts', () => {
  it('sees every event that existed before it once, and none twice', { timeout: 60_000 }, async () => {
    const live = await preverifiedTag(server);
    const before: SentEvent[] = Array.from({ length: 300 }, (_, i) => ({
      id: `old-${i}`,
      event_name: i % 2 ? 'PageView' : 'Purchase',
      event_time: new Date(Date.UTC(2026, 4, 1) + (i % 50) * 60_000).toISOString(),
    }));
    await collectOk(server, live.tagId, before);
    // The writer: a separate process posting events with times all over the walked range.
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `
        const [url, tagId] = process.argv.slice(1);
        let n = 0;
        (async () => {
          for (;;) {
            const events = Array.from({ length: 10 }, () => ({
              id: 'new-' + n++,
              event_name: n % 2 ? 'PageView' : 'Purchase',
              event_time: new Date(Date.UTC(2026, 4, 1) + Math.floor(Math.random() * 60) * 60000).toISOString(),
            }));
            const res = await fetch(url + '/v1/collect', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tagId, events }) });
            await res.text();
            if (n === 10) process.stdout.write('writing\\n');
          }
        })();
        `,
        server.url,
        live.tagId,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve) => writer.stdout?.once('data', () => resolve()));
      for (const sort of [SORTS[0], SORTS[2]] as Query[]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const res: { status: number; body: Json } = await listEvents(server, live.merchantId, {
            ...sort,
            limit: 40,
            ...(cursor ? { cursor } : {}),
          });
          expect(res.status).toBe(200);
          seen.push(...res.body.events.map((e: Json) => e.id));
          cursor = res.body.pagination.nextCursor;
          pages++;
        } while (cursor && pages < 500);
        expect(new Set(seen).size, `a repeat in ${JSON.stringify(sort)}`).toBe(seen.length);
        const missing = before.filter((e) => !seen.includes(e.id as string));
        expect(missing, `gaps in ${JSON.stringify(sort)}`).toEqual([]);
      }
      // The writer really wrote during the walks.
      const after = await listEvents(server, live.merchantId, { limit: 1 });
      expect(after.body.pagination.totalItems).toBeGreaterThan(before.length);
    } finally {
      writer.kill();
    }
  });
});
