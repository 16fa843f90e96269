import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collectOk, createMerchant, MISSING_ID, preverifiedTag, type SentEvent } from '../helpers/fixtures.js';
import { countStored, type Expected, getStats, query, sameTotals } from './stats-helpers.js';

// Statistics through REST on the real server, against counts over the stored events (PGlite, or
// PostgreSQL with TEST_DATABASE_URL).
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

async function merchantWith(events: SentEvent[]): Promise<string> {
  const tag = await preverifiedTag(server);
  for (let i = 0; i < events.length; i += 500) await collectOk(server, tag.tagId, events.slice(i, i + 500));
  return tag.merchantId;
}

/** A deterministic pseudo-random sequence (a failing case replays). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('stats: totals equal a count over the stored events', () => {
  const rand = random(32);
  const names = ['PageView', 'Purchase', 'AddToCart', 'Search'];
  const zones = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe'];
  const base = Date.UTC(2026, 0, 20);
  const events: SentEvent[] = Array.from({ length: 4000 }, (_, i) => {
    const name = names[Math.floor(rand() * names.length)]!;
    const time = base + Math.floor(rand() * 60 * DAY);
    const data =
      name === 'Purchase'
        ? rand() < 0.9
          ? { value: Math.floor(rand() * 100000) / 100, currency: rand() < 0.5 ? 'EUR' : 'usd' }
          : { value: 'n/a' }
        : name === 'PageView'
          ? { path: `/p${Math.floor(rand() * 30)}`, url: 'https://shop.example/p', referrer: '' }
          : {};
    return {
      id: `r${i}`,
      muid: `m${Math.floor(rand() * 700)}`,
      event_name: name,
      event_time: new Date(time).toISOString(),
      data,
    };
  });
  let merchantId: string;
  beforeAll(async () => {
    merchantId = await merchantWith(events);
  });

  it('summary and timeseries agree with the events for random ranges, zones and filters', async () => {
    let seen = 0;
    for (let round = 0; round < 12; round++) {
      const first = base - 2 * DAY + Math.floor(rand() * 50) * DAY;
      const last = first + Math.floor(rand() * 20) * DAY;
      const timezone = zones[round % zones.length]!;
      const filter = round % 3 === 0 ? [] : names.filter(() => rand() < 0.5);
      const q = {
        merchantId,
        startDate: day(first),
        endDate: day(last),
        timezone,
        events: filter.length ? filter.join(',') : undefined,
      };
      const expected = await countStored(
        server,
        merchantId,
        { date: q.startDate },
        { date: q.endDate },
        timezone,
        filter,
      );
      seen += expected.events;
      const summary = await getStats(server, 'summary', q);
      expect(summary.status, summary.text).toBe(200);
      expect(
        sameTotals(summary.body.totals, expected),
        `${JSON.stringify(q)}: ${JSON.stringify([summary.body.totals, expected])}`,
      ).toBe(true);

      const series = await getStats(server, 'timeseries', { ...q, interval: 'day' });
      expect(series.status, series.text).toBe(200);
      expect(series.body.points).toHaveLength((last - first) / DAY + 1);
      const sum = (key: 'events' | 'pageviews' | 'purchases') =>
        series.body.points.reduce((n: number, p: Expected) => n + p[key], 0);
      expect([sum('events'), sum('pageviews'), sum('purchases')]).toEqual([
        expected.events,
        expected.pageviews,
        expected.purchases,
      ]);
      const oneDay = Math.floor(rand() * series.body.points.length);
      const date = day(first + oneDay * DAY);
      const dayExpected = await countStored(server, merchantId, { date }, { date }, timezone, filter);
      expect(sameTotals(series.body.points[oneDay], dayExpected), date).toBe(true);
    }
    expect(seen).toBeGreaterThan(1000);
  });

  it('compare=previous gives the period of equal length before', async () => {
    const q = {
      merchantId,
      startDate: '2026-02-10',
      endDate: '2026-02-16',
      timezone: 'Asia/Kolkata',
      compare: 'previous',
    };
    const res = await getStats(server, 'summary', q);
    expect(res.status).toBe(200);
    expect(res.body.previous.range).toEqual({
      startDate: '2026-02-03',
      endDate: '2026-02-09',
      // The zone's canonical name as the runtime gives it (Node 20: Asia/Calcutta, docs/decisions/stats.md).
      timezone: new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Kolkata' }).resolvedOptions().timeZone,
    });
    const expected = await countStored(
      server,
      merchantId,
      { date: '2026-02-03' },
      { date: '2026-02-09' },
      'Asia/Kolkata',
    );
    expect(sameTotals(res.body.previous.totals, expected)).toBe(true);
    expect((await getStats(server, 'summary', { ...q, compare: undefined })).body.previous).toBeNull();
  });

  it('breakdown by event name and path: largest first, the rest in other, totals kept', async () => {
    const q = { merchantId, startDate: '2026-01-20', endDate: '2026-03-20', timezone: 'UTC' };
    const all = await countStored(server, merchantId, { date: q.startDate }, { date: q.endDate }, 'UTC');
    const byName = await getStats(server, 'breakdown', { ...q, dimension: 'event_name', limit: 2 });
    expect(byName.status, byName.text).toBe(200);
    expect(byName.body.rows).toHaveLength(2);
    const counts = byName.body.rows.map((r: { events: number }) => r.events);
    expect(counts[0]).toBeGreaterThanOrEqual(counts[1]);
    expect(counts[0] + counts[1] + byName.body.other.events).toBe(all.events);
    expect(byName.body.other.value).toBe('other');

    const byPath = await getStats(server, 'breakdown', { ...q, dimension: 'path', limit: 5 });
    expect(byPath.body.rows).toHaveLength(5);
    const pathEvents = byPath.body.rows.reduce((n: number, r: { events: number }) => n + r.events, 0);
    expect(pathEvents + byPath.body.other.events).toBe(all.pageviews);
    const top = byPath.body.rows[0];
    const topCount = events.filter(
      (e) =>
        e.event_name === 'PageView' && (e.data as { path: string }).path === top.value && e.event_time! < '2026-03-21',
    ).length;
    expect(top.events).toBe(topCount);
    const noPages = await getStats(server, 'breakdown', { ...q, dimension: 'path', events: 'Purchase' });
    expect(noPages.body).toMatchObject({ rows: [], other: null });
    const referrers = await getStats(server, 'breakdown', { ...q, dimension: 'referrer' });
    expect(referrers.body.rows).toEqual([
      { value: '(none)', events: all.pageviews, visitors: expect.any(Number), visits: expect.any(Number) },
    ]);
  });

  it('breakdown by path agrees with the events for random ranges and zones (weeks and their edges)', async () => {
    type Count = { value: string; events: number; visitors: number };
    for (let round = 0; round < 8; round++) {
      const first = base - 2 * DAY + Math.floor(rand() * 30) * DAY;
      const last = first + (6 + Math.floor(rand() * 30)) * DAY;
      const timezone = zones[round % zones.length]!;
      const q = { merchantId, startDate: day(first), endDate: day(last), timezone, dimension: 'path', limit: 4 };
      const inRange = sql`merchant_id = ${merchantId}::uuid and event_name = 'PageView'
        and event_time >= (${q.startDate}::date)::timestamp at time zone ${timezone}
        and event_time < (${q.endDate}::date + 1)::timestamp at time zone ${timezone}`;
      const counts = await query<Count>(
        server,
        sql`select (raw_data::jsonb->>'path') collate "C" as value, count(*)::int as events, count(distinct muid)::int as visitors
          from events where ${inRange} group by 1 order by 2 desc, 1`,
      );
      const res = await getStats(server, 'breakdown', q);
      expect(res.status, res.text).toBe(200);
      // Visitors exact: every sketch here is sparse.
      // Visits are checked against journeys in stats-visits; here they only sit between the two.
      expect(res.body.rows, JSON.stringify(q)).toEqual(
        counts.slice(0, 4).map((c) => ({ ...c, visits: expect.any(Number) })),
      );
      for (const row of res.body.rows as (Count & { visits: number })[]) {
        expect(row.visits).toBeGreaterThanOrEqual(row.visitors);
        expect(row.visits).toBeLessThanOrEqual(row.events);
      }
      const top = counts.slice(0, 4).map((c) => c.value);
      const [rest] = await query<{ events: number; visitors: number }>(
        server,
        sql`select count(*)::int as events, count(distinct muid)::int as visitors from events
          where ${inRange} and raw_data::jsonb->>'path' <> all(${`{${top.join(',')}}`}::text[])`,
      );
      expect(res.body.other, JSON.stringify(q)).toEqual({ value: 'other', ...rest, visits: expect.any(Number) });
    }
  });
});

describe('stats: local days across time zones', () => {
  it('New York: the 23-hour and 25-hour days, hourly and daily', async () => {
    // One event every 15 minutes through both DST weekends of 2026 (UTC instants).
    const events: SentEvent[] = [];
    for (const [from, to] of [
      [Date.UTC(2026, 2, 7), Date.UTC(2026, 2, 11)],
      [Date.UTC(2026, 9, 31), Date.UTC(2026, 10, 4)],
    ] as const) {
      for (let t = from; t < to; t += 15 * 60_000)
        events.push({ event_name: 'PageView', muid: `v${t}`, event_time: new Date(t).toISOString() });
    }
    const merchantId = await merchantWith(events);
    const tz = 'America/New_York';
    const spring = await getStats(server, 'timeseries', {
      merchantId,
      startDate: '2026-03-07',
      endDate: '2026-03-09',
      timezone: tz,
    });
    expect(spring.body.points.map((p: Expected & { start: string }) => [p.start, p.events])).toEqual([
      ['2026-03-07T00:00:00-05:00', 96],
      ['2026-03-08T00:00:00-05:00', 92],
      ['2026-03-09T00:00:00-04:00', 96],
    ]);
    const fall = await getStats(server, 'timeseries', {
      merchantId,
      startDate: '2026-10-31',
      endDate: '2026-11-02',
      timezone: tz,
    });
    expect(fall.body.points.map((p: Expected & { start: string }) => [p.start, p.events])).toEqual([
      ['2026-10-31T00:00:00-04:00', 96],
      ['2026-11-01T00:00:00-04:00', 100],
      ['2026-11-02T00:00:00-05:00', 96],
    ]);
    const hours = await getStats(server, 'timeseries', {
      merchantId,
      startDate: '2026-11-01',
      endDate: '2026-11-01',
      timezone: tz,
      interval: 'hour',
    });
    expect(hours.body.points).toHaveLength(25);
    expect(hours.body.points.slice(0, 3).map((p: { start: string }) => p.start)).toEqual([
      '2026-11-01T00:00:00-04:00',
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T01:00:00-05:00',
    ]);
    expect(hours.body.points.every((p: Expected) => p.events === 4 && p.visitors === 4)).toBe(true);
    const springHours = await getStats(server, 'timeseries', {
      merchantId,
      startDate: '2026-03-08',
      endDate: '2026-03-08',
      timezone: tz,
      interval: 'hour',
    });
    expect(springHours.body.points).toHaveLength(23);
  });

  it('Kolkata: the half-hour midnight splits the day at 18:30 UTC; weeks and months start at local midnight', async () => {
    const merchantId = await merchantWith([
      { event_name: 'PageView', muid: 'a', event_time: '2026-06-01T18:29:59.999Z' },
      { event_name: 'PageView', muid: 'b', event_time: '2026-06-01T18:30:00.000Z' },
      { event_name: 'PageView', muid: 'c', event_time: '2026-06-30T18:30:00.000Z' },
    ]);
    const q = { merchantId, startDate: '2026-06-01', endDate: '2026-06-02', timezone: 'Asia/Kolkata' };
    const days = await getStats(server, 'timeseries', q);
    expect(days.body.points.map((p: Expected & { start: string }) => [p.start, p.events, p.visitors])).toEqual([
      ['2026-06-01T00:00:00+05:30', 1, 1],
      ['2026-06-02T00:00:00+05:30', 1, 1],
    ]);
    const months = await getStats(server, 'timeseries', { ...q, endDate: '2026-07-15', interval: 'month' });
    expect(months.body.points.map((p: Expected & { start: string }) => [p.start, p.events])).toEqual([
      ['2026-06-01T00:00:00+05:30', 2],
      ['2026-07-01T00:00:00+05:30', 1],
    ]);
    const weeks = await getStats(server, 'timeseries', { ...q, endDate: '2026-06-14', interval: 'week' });
    expect(weeks.body.points.map((p: { start: string }) => p.start)).toEqual([
      '2026-06-01T00:00:00+05:30',
      '2026-06-08T00:00:00+05:30',
    ]);
  });

  it('zero-fills every point of a range without events', async () => {
    const merchantId = await createMerchant(server);
    const res = await getStats(server, 'timeseries', { merchantId, startDate: '2025-12-30', endDate: '2026-01-02' });
    expect(res.body.points).toEqual(
      ['2025-12-30', '2025-12-31', '2026-01-01', '2026-01-02'].map((date) => ({
        start: `${date}T00:00:00+00:00`,
        events: 0,
        visitors: 0,
        pageviews: 0,
        purchases: 0,
        revenue: [],
        visits: 0,
        bounceRate: 0,
        visitDuration: 0,
        viewsPerVisit: 0,
      })),
    );
  });
});

describe('stats: late events, revenue, retries', () => {
  it('a late event lands in its own bucket; a retried batch counts once; revenue is exact per currency', async () => {
    const tag = await preverifiedTag(server);
    const now = Date.now();
    const today = day(now);
    const purchases: SentEvent[] = Array.from({ length: 10 }, (_, i) => ({
      id: `p${i}`,
      event_name: 'Purchase',
      muid: 'buyer',
      event_time: new Date(now - 1000).toISOString(),
      data: { value: 0.1, currency: 'EUR' },
    }));
    purchases.push({
      id: 'big',
      event_name: 'Purchase',
      muid: 'buyer',
      event_time: new Date(now - 1000).toISOString(),
      data: { value: '123456789012345678.99', currency: 'JPY' },
    });
    await collectOk(server, tag.tagId, purchases);
    await collectOk(server, tag.tagId, purchases); // the retry: stored once, counted once
    const late = new Date(now - 5 * DAY);
    await collectOk(server, tag.tagId, [
      { id: 'late', event_name: 'PageView', muid: 'slow', event_time: late.toISOString() },
    ]);
    const q = { merchantId: tag.merchantId, startDate: day(now - 6 * DAY), endDate: today };
    const series = await getStats(server, 'timeseries', q);
    const points = series.body.points as (Expected & { start: string })[];
    expect(points.find((p) => p.start.startsWith(day(late.getTime())))).toMatchObject({
      events: 1,
      pageviews: 1,
      visitors: 1,
    });
    expect(points.at(-1)).toMatchObject({
      events: 11,
      purchases: 11,
      visitors: 1,
      revenue: [
        { currency: 'EUR', amount: '1.0' },
        { currency: 'JPY', amount: '123456789012345678.99' },
      ],
    });
  });
});

describe("stats: Engagement (the tag's visible time, issue 52)", () => {
  it('is no interaction: a page view and its Engagement are a bounce lasting the engaged time', async () => {
    const tag = await preverifiedTag(server);
    const at = Date.UTC(2026, 2, 10, 12);
    const iso = (ms: number) => new Date(ms).toISOString();
    const page = (path: string) => ({ path, url: `https://shop.example${path}`, referrer: '' });
    await collectOk(server, tag.tagId, [
      // One page seen 40 s: a bounce of 40 s.
      { id: 'r-view', muid: 'reader', event_name: 'PageView', event_time: iso(at), data: page('/post') },
      {
        id: 'r-engaged',
        muid: 'reader',
        event_name: 'Engagement',
        event_time: iso(at + 40_000),
        data: { path: '/post', engaged_ms: 40_000 },
      },
      // Two pages, the second seen 20 s: no bounce, 32 s.
      { id: 'b-view-1', muid: 'browser', event_name: 'PageView', event_time: iso(at), data: page('/') },
      {
        id: 'b-engaged-1',
        muid: 'browser',
        event_name: 'Engagement',
        event_time: iso(at + 10_000),
        data: { path: '/', engaged_ms: 10_000 },
      },
      { id: 'b-view-2', muid: 'browser', event_name: 'PageView', event_time: iso(at + 12_000), data: page('/p') },
      {
        id: 'b-engaged-2',
        muid: 'browser',
        event_name: 'Engagement',
        event_time: iso(at + 32_000),
        data: { path: '/p', engaged_ms: 20_000 },
      },
      // One page and a purchase: no bounce, 5 s.
      { id: 'c-view', muid: 'buyer', event_name: 'PageView', event_time: iso(at), data: page('/buy') },
      { id: 'c-buy', muid: 'buyer', event_name: 'Purchase', event_time: iso(at + 5_000), data: {} },
    ]);
    const summary = await getStats(server, 'summary', {
      merchantId: tag.merchantId,
      startDate: '2026-03-10',
      endDate: '2026-03-10',
    });
    expect(summary.status).toBe(200);
    expect(summary.body.totals).toMatchObject({
      events: 8,
      pageviews: 4,
      visits: 3,
      bounceRate: 1 / 3,
      visitDuration: (40 + 32 + 5) / 3,
    });
  });
});

describe('stats: access and validation', () => {
  it("another partner's merchant, or a missing one, is 404 MERCHANT_NOT_FOUND", async () => {
    const other = await server.createPartner('Other');
    const theirs = await createMerchant(server, other.apiKey);
    for (const merchantId of [theirs, MISSING_ID]) {
      for (const kind of ['summary', 'timeseries', 'breakdown'] as const) {
        const res = await getStats(server, kind, {
          merchantId,
          startDate: '2026-01-01',
          endDate: '2026-01-02',
          dimension: 'path',
        });
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('MERCHANT_NOT_FOUND');
      }
    }
  });

  it.each([
    ['a bad zone', { timezone: 'Mars/Olympus' }, 'timezone'],
    ['a date that is not one', { startDate: '2026-02-30' }, 'startDate'],
    ['an end before the start', { endDate: '2025-12-31' }, 'endDate'],
    ['a range over 400 days', { endDate: '2027-02-05' }, 'endDate'],
    ['an unknown interval', { interval: 'minute' }, 'interval'],
    ['hourly points over more than 31 days', { interval: 'hour', endDate: '2026-02-01' }, 'interval'],
  ])('%s is 400 VALIDATION_ERROR naming the parameter', async (_, change, param) => {
    const merchantId = await createMerchant(server);
    const res = await getStats(server, 'timeseries', {
      merchantId,
      startDate: '2026-01-01',
      endDate: '2026-01-02',
      ...change,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(param) });
  });

  it('answers over tRPC as over REST', async () => {
    const merchantId = await createMerchant(server);
    const q = { merchantId, startDate: '2026-01-01', endDate: '2026-01-02', timezone: 'Asia/Kolkata' };
    const caller = server.caller(server.partner.apiKey);
    expect(await caller.stats.summary(q)).toEqual((await getStats(server, 'summary', q)).body);
    expect(await caller.stats.timeseries({ ...q, interval: 'hour' })).toEqual(
      (await getStats(server, 'timeseries', { ...q, interval: 'hour' })).body,
    );
    expect(await caller.stats.breakdown({ ...q, dimension: 'event_name' })).toEqual(
      (await getStats(server, 'breakdown', { ...q, dimension: 'event_name' })).body,
    );
    const other = await server.createPartner('Other tRPC');
    await expect(server.caller(other.apiKey).stats.summary(q)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a range of exactly 400 days is accepted', async () => {
    const merchantId = await createMerchant(server);
    const res = await getStats(server, 'summary', { merchantId, startDate: '2026-01-01', endDate: '2027-02-04' });
    expect(res.status, res.text).toBe(200);
  });
});
