import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIds, events } from '../src/db/schema/index.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { type ApiResponse, api, type Json } from './helpers/api.js';

// The event list's fast paths (day counts with exact edge-day counts, deferred joins for deep
// pages, per-name merges) must answer exactly what the plain query would: checked against a
// reference computed here, over events placed on day edges, sharing times, across several names.

interface Stored {
  id: string;
  muid: string;
  event_name: string;
  event_time: string;
  raw_data: string;
  consent: 'not_required';
}

const NAMES = ['AddToCart', 'PageView', 'Purchase', 'Search'];
const DAY0 = Date.UTC(2026, 2, 1);
const HOUR = 3_600_000;

let server: TestServer;

/** A new merchant of the test partner with a preverified (live at once) tag. */
async function merchantWithTag(): Promise<{ merchantId: string; tagId: string }> {
  const client = api(server, server.partner.apiKey);
  const created = await client.post('/v1/partners/merchant', { name: 'Scale merchant' });
  expect(created.status).toBe(201);
  const tag = await client.post('/v1/partners/tag/generate', {
    merchantId: created.body.merchantId,
    domain: server.partner.domain,
  });
  expect(tag.status).toBeLessThan(300);
  return { merchantId: created.body.merchantId, tagId: tag.body.tagId };
}

function listEvents(
  _: TestServer,
  merchant: string,
  query: Record<string, string | number> = {},
): Promise<ApiResponse> {
  const params = new URLSearchParams({ merchantId: merchant });
  for (const [name, value] of Object.entries(query)) params.set(name, String(value));
  return api(server, server.partner.apiKey).get(`/v1/partners/events?${params}`);
}

let merchantId: string;
let tagId: string;
let stored: Stored[] = [];

function makeEvents(count: number, prefix: string): Stored[] {
  const out: Stored[] = [];
  for (let i = 0; i < count; i++) {
    // Day edges (midnight, the last millisecond), times shared by several events, five days.
    const dayIndex = i % 5;
    const kind = i % 7;
    const offset =
      kind === 0 ? 0 : kind === 1 ? 24 * HOUR - 1 : kind === 2 ? 12 * HOUR : ((i * 7919) % (24 * HOUR - 2)) + 1;
    out.push({
      id: `${prefix}${String(i).padStart(5, '0')}`,
      muid: `u${i % 13}`,
      event_name: NAMES[(i * i + i) % NAMES.length] as string,
      event_time: new Date(DAY0 + dayIndex * 24 * HOUR + offset).toISOString(),
      raw_data: JSON.stringify({ i }),
      consent: 'not_required',
    });
  }
  return out;
}

async function insert(rows: Stored[]): Promise<void> {
  const db = server.app.database.db;
  for (let i = 0; i < rows.length; i += 200) {
    // As ingestion does (migration 0028): the ids first, then only the events whose id was new.
    const won = await db
      .insert(eventIds)
      .values(rows.slice(i, i + 200).map((row) => ({ merchantId, id: row.id, eventTime: new Date(row.event_time) })))
      .onConflictDoNothing()
      .returning({ id: eventIds.id });
    const fresh = new Set(won.map((w) => w.id));
    if (fresh.size === 0) continue;
    await db.insert(events).values(
      rows
        .slice(i, i + 200)
        .filter((row) => fresh.has(row.id))
        .map((row) => ({
          merchantId,
          tagId,
          id: row.id,
          muid: row.muid,
          eventName: row.event_name,
          eventTime: new Date(row.event_time),
          rawData: row.raw_data,
        })),
    );
  }
}

function reference(query: {
  sortBy: string;
  sortOrder: string;
  events?: string;
  startDate?: string;
  endDate?: string;
}) {
  const names = query.events ? query.events.split(',') : [];
  const start = query.startDate ? Date.parse(query.startDate) : -Infinity;
  let end = query.endDate ? Date.parse(query.endDate) : Infinity;
  if (query.endDate && /^\d{4}-\d{2}-\d{2}$/.test(query.endDate)) end += 24 * HOUR - 1;
  const sign = query.sortOrder === 'asc' ? 1 : -1;
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return stored
    .filter((e) => names.length === 0 || names.includes(e.event_name))
    .filter((e) => Date.parse(e.event_time) >= start && Date.parse(e.event_time) <= end)
    .sort(
      (a, b) =>
        sign *
        ((query.sortBy === 'event_name' ? cmp(a.event_name, b.event_name) : 0) ||
          cmp(a.event_time, b.event_time) ||
          cmp(a.id, b.id)),
    );
}

async function rollupMismatches(): Promise<unknown[]> {
  const result = await server.app.database.db.execute(sql`
    with actual as (
      select merchant_id, (event_time at time zone 'UTC')::date as day, event_name, count(*)::int as n
      from events group by 1, 2, 3
    ), kept as (
      -- Delta rows (migration 0029): a key's count is the sum of its rows.
      select merchant_id, day, event_name, sum(n)::int as n from event_day_counts group by 1, 2, 3 having sum(n) <> 0
    )
    select * from (table actual except table kept) a
    union all
    select * from (table kept except table actual) b`);
  return Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
}

beforeAll(async () => {
  server = await startTestServer();
  const tag = await merchantWithTag();
  merchantId = tag.merchantId;
  tagId = tag.tagId;
  stored = makeEvents(420, 'e');
  await insert(stored);
});
afterAll(() => server?.close());

const RANGES: Array<{ startDate?: string; endDate?: string }> = [
  {},
  { startDate: '2026-03-02T10:00:00Z' },
  { endDate: '2026-03-03' },
  { startDate: '2026-03-02', endDate: '2026-03-04' },
  { startDate: '2026-03-01T23:59:59.999Z', endDate: '2026-03-04T00:00:00Z' },
  { startDate: '2026-03-03T01:00:00Z', endDate: '2026-03-04T05:00:00.500Z' },
  { startDate: '2026-03-03T01:00:00Z', endDate: '2026-03-03T05:00:00.500Z' },
];
const NAME_FILTERS = [undefined, 'Purchase', 'PageView,Purchase', 'Search,AddToCart,Nope'];

describe('event list at scale: exact pages and totals on the fast paths', () => {
  it('matches the reference order and total for every sort, name filter and range, on shallow and deep pages', async () => {
    let checked = 0;
    for (const sortBy of ['event_time', 'event_name']) {
      for (const sortOrder of ['desc', 'asc']) {
        for (const names of NAME_FILTERS) {
          for (const range of RANGES) {
            const query = { sortBy, sortOrder, ...(names ? { events: names } : {}), ...range };
            const expected = reference(query);
            for (const page of [1, 4]) {
              const res = await listEvents(server, merchantId, { ...query, limit: 9, page });
              expect(res.status, JSON.stringify(query)).toBe(200);
              expect(res.body.pagination.totalItems, JSON.stringify(query)).toBe(expected.length);
              expect(res.body.events, JSON.stringify({ ...query, page })).toEqual(
                expected.slice((page - 1) * 9, page * 9),
              );
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBe(2 * 2 * NAME_FILTERS.length * RANGES.length * 2);
  });

  it('walks every page of a multi-name listing without skipping or repeating', async () => {
    const query = { sortBy: 'event_time', sortOrder: 'desc', events: 'PageView,Purchase', limit: 25 };
    const expected = reference(query).map((e) => e.id);
    const seen: string[] = [];
    for (let page = 1; page <= Math.ceil(expected.length / 25) + 1; page++) {
      const res = await listEvents(server, merchantId, { ...query, page });
      expect(res.status).toBe(200);
      seen.push(...res.body.events.map((e: Json) => e.id));
    }
    expect(seen).toEqual(expected);
  });

  it('answers an empty page past the end with the exact total', async () => {
    const res = await listEvents(server, merchantId, { page: 1000, limit: 100 });
    expect(res.status).toBe(200);
    expect(res.body.events).toEqual([]);
    expect(res.body.pagination).toMatchObject({ totalItems: stored.length, currentPage: 1000, hasNextPage: false });
  });

  it('keeps event_day_counts exact through inserts, duplicate retries, updates and deletes', async () => {
    expect(await rollupMismatches()).toEqual([]);
    // A retry of stored events plus new ones: only the new ones count.
    const extra = makeEvents(60, 'x');
    await insert([...stored.slice(0, 100), ...extra]);
    stored = [...stored, ...extra];
    expect(await rollupMismatches()).toEqual([]);
    const res = await listEvents(server, merchantId, { startDate: '2026-03-02', endDate: '2026-03-03' });
    expect(res.body.pagination.totalItems).toBe(
      reference({ sortBy: 'event_time', sortOrder: 'desc', startDate: '2026-03-02', endDate: '2026-03-03' }).length,
    );

    const db = server.app.database.db;
    await db.execute(sql`update events set event_time = event_time + interval '1 day', event_name = 'Search'
      where merchant_id = ${merchantId}::uuid and id in ('e00001', 'e00002')`);
    await db.execute(sql`delete from events where merchant_id = ${merchantId}::uuid and id like 'x%'`);
    expect(await rollupMismatches()).toEqual([]);

    // Another merchant's events never leak into these totals.
    const other = await merchantWithTag();
    await db.insert(events).values({
      merchantId: other.merchantId,
      tagId: other.tagId,
      id: randomUUID(),
      muid: 'm',
      eventName: 'Purchase',
      eventTime: new Date(DAY0),
      rawData: '{}',
    });
    const mine = await listEvents(server, merchantId, { events: 'Purchase' });
    const theirs = await listEvents(server, other.merchantId, { events: 'Purchase' });
    expect(theirs.body.pagination.totalItems).toBe(1);
    expect(mine.body.events.every((e: Json) => e.id !== theirs.body.events[0].id)).toBe(true);
    expect(await rollupMismatches()).toEqual([]);
  });
});
