// Visits, sources, clients and bots on synthetic journeys whose answers are known by construction:
// each figure the API gives is compared with the same figure computed here over the raw events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { collectorHostOf, postEvents } from '../helpers/collector.js';
import { type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';
import { getStats } from './stats-helpers.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 2, 10, 10); // 2026-03-10 10:00 UTC
const DAY = '2026-03-10';

const UA = {
  windowsChrome:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  windowsEdge:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0',
  macFirefox: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:121.0) Gecko/20100101 Firefox/121.0',
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  androidPhone:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  // A partner's backend that does not forward its visitor's user agent: kept, its client unknown.
  library: 'python-requests/2.31.0',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  headless:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
} as const;

/** What each user agent is, read off the strings by hand. */
const CLIENT: Record<string, { device: string; browser: string; os: string }> = {
  [UA.windowsChrome]: { device: 'desktop', browser: 'Chrome', os: 'Windows' },
  [UA.windowsEdge]: { device: 'desktop', browser: 'Microsoft Edge', os: 'Windows' },
  [UA.macFirefox]: { device: 'desktop', browser: 'Firefox', os: 'macOS' },
  [UA.iphone]: { device: 'mobile', browser: 'Safari', os: 'iOS' },
  [UA.ipad]: { device: 'tablet', browser: 'Safari', os: 'iOS' },
  [UA.androidPhone]: { device: 'mobile', browser: 'Chrome', os: 'Android' },
  [UA.library]: { device: '(none)', browser: '(none)', os: '(none)' },
};

interface Hit {
  /** Minutes after the journey's start. */
  at: number;
  name: string;
  data?: Record<string, unknown>;
}

interface Journey {
  muid: string;
  ua: string;
  /** A trusted proxy's country header, or the address the proxy forwarded (looked up), or neither. */
  header?: string;
  ip?: string;
  /** The country expected: the header's, the address's (IPtoASN's table), or `(none)`. */
  country: string;
  start: number;
  hits: Hit[];
  /** The channel of each of its visits, as GA4's default grouping names it. */
  channels: string[];
}

const SHOP = 'https://shop.example';
const page = (path: string, referrer = '', query = '') => ({
  name: 'PageView',
  data: { url: `${SHOP}${path}${query}`, path, referrer },
});

/** One journey per channel case: a landing page view and what brought it. */
const CHANNEL_CASES: [string, { referrer?: string; query?: string }][] = [
  ['Direct', {}],
  ['Organic Search', { referrer: 'https://www.google.com/' }],
  ['Organic Search', { referrer: 'https://duckduckgo.com/' }],
  ['Paid Search', { referrer: 'https://www.google.com/', query: '?gclid=Cj0KCQ' }],
  ['Paid Search', { referrer: 'https://www.bing.com/', query: '?msclkid=abc123' }],
  ['Paid Search', { query: '?utm_source=google&utm_medium=cpc&utm_campaign=brand' }],
  ['Organic Social', { referrer: 'https://www.facebook.com/' }],
  ['Paid Social', { query: '?fbclid=IwAR0' }],
  ['Paid Social', { query: '?utm_source=facebook&utm_medium=paid_social' }],
  ['Email', { query: '?utm_source=newsletter&utm_medium=email&utm_campaign=spring' }],
  ['Affiliates', { query: '?utm_source=partner&utm_medium=affiliate' }],
  ['Display', { query: '?utm_source=network&utm_medium=display' }],
  ['SMS', { query: '?utm_source=sms&utm_medium=text' }],
  ['Cross-network', { query: '?utm_source=google&utm_medium=cpc&utm_campaign=pmax-cross-network' }],
  ['Organic Video', { query: '?utm_source=vendor&utm_medium=video' }],
  ['Referral', { referrer: 'https://some-blog.example.org/post' }],
  ['Unassigned', { query: '?utm_source=foo&utm_medium=bar' }],
  // The shop's own host as referrer is internal navigation, never a source.
  ['Direct', { referrer: 'https://shop.example/cart' }],
  ['Direct', { referrer: 'https://www.shop.example/' }],
];

const JOURNEYS: Journey[] = [
  {
    // Two visits: an email landing with a purchase, then 44 minutes later a bounce from Google.
    muid: 'v1',
    ua: UA.windowsChrome,
    header: 'DE',
    country: 'DE',
    start: T0,
    hits: [
      { at: 0, ...page('/', '', '?utm_source=newsletter&utm_medium=email&utm_campaign=spring') },
      { at: 2, ...page('/product/1', `${SHOP}/`) },
      { at: 5, name: 'AddToCart', data: { sku: 'p1' } },
      { at: 6, name: 'Purchase', data: { value: '19.90', currency: 'EUR' } },
      { at: 50, ...page('/blog', 'https://www.google.com/') },
    ],
    channels: ['Email', 'Organic Search'],
  },
  {
    // A paid-search bounce whose engaged time (40 s) makes its duration.
    muid: 'v2',
    ua: UA.iphone,
    ip: '81.2.69.142',
    country: 'GB',
    start: T0 + 3 * MINUTE,
    hits: [
      { at: 0, ...page('/landing', 'https://www.google.com/', '?gclid=abc') },
      { at: 40 / 60, name: 'Engagement', data: { path: '/landing', engaged_ms: 40_000 } },
    ],
    channels: ['Paid Search'],
  },
  {
    // One visit of five pages: the gaps (10, 15, 15, 29 minutes) are all within 30.
    muid: 'v3',
    ua: UA.ipad,
    header: 'FR',
    country: 'FR',
    start: T0 + 7 * MINUTE,
    hits: [
      { at: 0, ...page('/', 'https://www.facebook.com/') },
      { at: 10, ...page('/a', `${SHOP}/`) },
      { at: 25, ...page('/b', `${SHOP}/a`) },
      { at: 40, ...page('/c', `${SHOP}/b`) },
      { at: 69, ...page('/d', `${SHOP}/c`) },
    ],
    channels: ['Organic Social'],
  },
  {
    // Split at 30 minutes and one millisecond: two visits, both bounces.
    muid: 'v4',
    ua: UA.androidPhone,
    ip: '133.242.0.3',
    country: 'JP',
    start: T0 + 12 * MINUTE,
    hits: [
      { at: 0, ...page('/sale', '', '?utm_source=partner&utm_medium=affiliate') },
      { at: 30 + 1 / 60_000, ...page('/sale', '') },
    ],
    channels: ['Affiliates', 'Direct'],
  },
  {
    // A visit that begins with a sign-up before its first page: its source is that page's.
    muid: 'v5',
    ua: UA.macFirefox,
    header: 'US',
    country: 'US',
    start: T0 + 20 * MINUTE,
    hits: [
      { at: 0, name: 'SignUp', data: {} },
      { at: 1, ...page('/welcome', 'https://duckduckgo.com/') },
      { at: 3, ...page('/account', `${SHOP}/welcome`) },
    ],
    channels: ['Organic Search'],
  },
  {
    // A partner's backend forwarding a hit without its visitor's user agent or address.
    muid: 'v6',
    ua: UA.library,
    country: '(none)',
    start: T0 + 30 * MINUTE,
    hits: [{ at: 0, ...page('/api-landing', '') }],
    channels: ['Direct'],
  },
  {
    // Across Tokyo's midnight (15:00 UTC): counted on the Tokyo day it begins.
    muid: 'v7',
    ua: UA.windowsEdge,
    header: 'JP',
    country: 'JP',
    start: Date.UTC(2026, 2, 10, 14, 50),
    hits: [
      { at: 0, ...page('/night', 'https://www.google.com/') },
      { at: 20, ...page('/late', `${SHOP}/night`) },
      { at: 25, name: 'Purchase', data: { value: '5.00', currency: 'EUR' } },
    ],
    channels: ['Organic Search'],
  },
  ...CHANNEL_CASES.map(
    ([channel, { referrer, query }], i): Journey => ({
      muid: `c${i}`,
      ua: i % 2 ? UA.windowsChrome : UA.androidPhone,
      header: i % 3 ? 'DE' : 'AT',
      country: i % 3 ? 'DE' : 'AT',
      start: T0 + (60 + i) * MINUTE,
      hits: [{ at: 0, ...page(`/c/${i}`, referrer ?? '', query ?? '') }],
      channels: [channel],
    }),
  ),
];

/** Bots: refused and counted, never stored; on both ways in. */
const BOT_EVENTS = { server: 3, tag: 2 };

interface RawEvent {
  muid: string;
  at: number;
  name: string;
  path: string;
  country: string;
  device: string;
  browser: string;
  os: string;
}

interface RawVisit {
  muid: string;
  start: number;
  end: number;
  pageviews: number;
  interactions: number;
  entry: string;
  exit: string;
  channel: string;
  events: RawEvent[];
}

function rawEvents(journey: Journey): RawEvent[] {
  const client = CLIENT[journey.ua]!;
  return journey.hits.map((hit) => ({
    muid: journey.muid,
    at: journey.start + Math.round(hit.at * MINUTE),
    name: hit.name,
    path: hit.name === 'PageView' ? (hit.data?.path as string) : '',
    country: journey.country,
    ...client,
  }));
}

/** A visitor's events with no gap over 30 minutes, over the raw events. */
function rawVisits(journey: Journey): RawVisit[] {
  const visits: RawVisit[] = [];
  for (const event of rawEvents(journey)) {
    const last = visits.at(-1);
    if (last && event.at - last.end <= 30 * MINUTE) {
      last.end = event.at;
      last.events.push(event);
    } else {
      visits.push({ muid: journey.muid, start: event.at, end: event.at, events: [event] } as RawVisit);
    }
  }
  visits.forEach((visit, i) => {
    const pages = visit.events.filter((e) => e.name === 'PageView');
    visit.pageviews = pages.length;
    visit.interactions = visit.events.filter((e) => e.name !== 'PageView' && e.name !== 'Engagement').length;
    visit.entry = pages[0]?.path ?? '';
    visit.exit = pages.at(-1)?.path ?? '';
    visit.channel = journey.channels[i]!;
  });
  return visits;
}

const ALL_VISITS = JOURNEYS.flatMap(rawVisits);

/** The summary's figures over raw visits that begin, and events that fall, in `[from, to)`. */
function expectedTotals(from: number, to: number, keep: (e: RawEvent, v: RawVisit) => boolean = () => true) {
  const visits = ALL_VISITS.filter((v) => v.start >= from && v.start < to && v.events.some((e) => keep(e, v)));
  const events = ALL_VISITS.flatMap((v) => v.events.filter((e) => e.at >= from && e.at < to && keep(e, v)));
  const n = visits.length;
  return {
    events: events.length,
    visitors: new Set(events.map((e) => e.muid)).size,
    pageviews: events.filter((e) => e.name === 'PageView').length,
    purchases: events.filter((e) => e.name === 'Purchase').length,
    visits: n,
    bounceRate: n && visits.filter((v) => v.pageviews === 1 && v.interactions === 0).length / n,
    visitDuration: n && visits.reduce((s, v) => s + (v.end - v.start), 0) / 1000 / n,
    viewsPerVisit: n && visits.reduce((s, v) => s + v.pageviews, 0) / n,
  };
}

/** A breakdown's rows over raw page views (visits for entry and exit pages), largest first. */
function expectedRows(
  value: (e: RawEvent, v: RawVisit) => string,
  from: number,
  to: number,
  perVisit = false,
): { value: string; events: number; visitors: number; visits: number }[] {
  const rows = new Map<string, { events: number; visitors: Set<string>; visits: Set<RawVisit> }>();
  for (const visit of ALL_VISITS) {
    for (const event of visit.events) {
      if (event.name !== 'PageView' || event.at < from || event.at >= to) continue;
      if (perVisit && event !== visit.events.find((e) => e.name === 'PageView')) continue;
      const key = value(event, visit);
      const row = rows.get(key) ?? { events: 0, visitors: new Set(), visits: new Set() };
      row.events += 1;
      row.visitors.add(visit.muid);
      row.visits.add(visit);
      rows.set(key, row);
    }
  }
  return [...rows]
    .map(([v, r]) => ({ value: v, events: r.events, visitors: r.visitors.size, visits: r.visits.size }))
    .sort((a, b) => b.events - a.events || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

let server: TestServer;
let tag: GeneratedTag;
const DAY_START = Date.UTC(2026, 2, 10);
const DAY_END = DAY_START + 86_400_000;

beforeAll(async () => {
  // Loopback is the trusted proxy: its X-Forwarded-For and country headers are believed.
  server = await startTestServer({ env: { TRUST_PROXY: 'loopback' } });
  tag = await preverifiedTag(server);
  const headersOf = (journey: { ua: string; header?: string; ip?: string }) => ({
    'user-agent': journey.ua,
    ...(journey.header ? { 'cf-ipcountry': journey.header } : {}),
    ...(journey.ip ? { 'x-forwarded-for': journey.ip } : {}),
  });
  for (const journey of JOURNEYS) {
    const events = journey.hits.map((hit, i) => ({
      id: `${journey.muid}-${i}`,
      muid: journey.muid,
      event_name: hit.name,
      event_time: new Date(journey.start + Math.round(hit.at * MINUTE)).toISOString(),
      data: hit.data ?? {},
    }));
    const res = await api(server).post('/v1/collect', { tagId: tag.tagId, events }, headersOf(journey));
    expect(res.status, res.text).toBe(202);
  }
  const bot = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      event_name: 'PageView',
      event_time: new Date(T0 + i * MINUTE).toISOString(),
      data: { url: `${SHOP}/`, path: '/', referrer: '' },
    }));
  const refused = await api(server).post(
    '/v1/collect',
    { tagId: tag.tagId, events: bot(BOT_EVENTS.server) },
    { 'user-agent': UA.googlebot },
  );
  // A bot is answered as anyone: it learns nothing.
  expect(refused.status).toBe(202);
  expect(refused.body).toEqual({ accepted: BOT_EVENTS.server });
  const host = await collectorHostOf(server, tag);
  const beacon = await postEvents(
    server.url,
    host,
    { tagId: tag.tagId, events: bot(BOT_EVENTS.tag) },
    { 'user-agent': UA.headless },
  );
  expect(beacon.status, beacon.text).toBe(202);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const q = (extra: Record<string, string | number> = {}) => ({
  merchantId: tag.merchantId,
  startDate: DAY,
  endDate: DAY,
  ...extra,
});

describe('visits over synthetic journeys', () => {
  it('summary: visits split at 30 minutes, bounces, durations (with engagement), views per visit, bots', async () => {
    const res = await getStats(server, 'summary', q());
    expect(res.status, res.text).toBe(200);
    const { revenue, botEvents, goals, ...totals } = res.body.totals;
    expect(goals).toEqual([]);
    const expected = expectedTotals(DAY_START, DAY_END);
    expect(totals).toEqual({ ...expected, visitDuration: expect.any(Number), bounceRate: expect.any(Number) });
    expect(totals.visitDuration).toBeCloseTo(expected.visitDuration, 6);
    expect(totals.bounceRate).toBeCloseTo(expected.bounceRate, 9);
    expect(revenue).toEqual([{ currency: 'EUR', amount: '24.90' }]);
    expect(botEvents).toBe(BOT_EVENTS.server + BOT_EVENTS.tag);
    // By construction: v1 2 visits, v4 2 (split at 30 min + 1 ms), the others one each.
    expect(totals.visits).toBe(JOURNEYS.length + 2);
    // v2's single page lasts its 40 engaged seconds.
    const v2 = ALL_VISITS.find((v) => v.muid === 'v2')!;
    expect(v2.end - v2.start).toBe(40_000);
  });

  it('timeseries: each hour counts the visits that begin in it', async () => {
    const res = await getStats(server, 'timeseries', q({ interval: 'hour' }));
    expect(res.status, res.text).toBe(200);
    const points = res.body.points as { start: string; visits: number; bounceRate: number; events: number }[];
    expect(points).toHaveLength(24);
    points.forEach((point, hour) => {
      const from = DAY_START + hour * 3_600_000;
      const expected = expectedTotals(from, from + 3_600_000);
      expect({ visits: point.visits, events: point.events }, point.start).toEqual({
        visits: expected.visits,
        events: expected.events,
      });
      expect(point.bounceRate).toBeCloseTo(expected.bounceRate, 9);
    });
  });

  it('time zones: a visit across Tokyo midnight counts on the Tokyo day it begins', async () => {
    const res = await getStats(server, 'summary', q({ timezone: 'Asia/Tokyo' }));
    const from = DAY_START - 9 * 3_600_000;
    const expected = expectedTotals(from, from + 86_400_000);
    const { revenue: _r, botEvents: _b, goals: _g, ...totals } = res.body.totals;
    expect(totals).toEqual({ ...expected, visitDuration: expect.any(Number), bounceRate: expect.any(Number) });
    expect(totals.visitDuration).toBeCloseTo(expected.visitDuration, 6);
    // v7 begins 23:50 in Tokyo on the 10th: in; its events after midnight are the 11th's.
    expect(ALL_VISITS.some((v) => v.muid === 'v7' && v.start < from + 86_400_000)).toBe(true);
  });

  it.each([
    ['channel', (_e: RawEvent, v: RawVisit) => v.channel, false],
    ['country', (e: RawEvent) => e.country, false],
    ['device', (e: RawEvent) => e.device, false],
    ['browser', (e: RawEvent) => e.browser, false],
    ['os', (e: RawEvent) => e.os, false],
    ['entry_page', (_e: RawEvent, v: RawVisit) => v.entry, true],
    ['path', (e: RawEvent) => e.path, false],
  ] as const)('breakdown by %s equals the raw count', async (dimension, value, perVisit) => {
    const res = await getStats(server, 'breakdown', q({ dimension, limit: 100 }));
    expect(res.status, res.text).toBe(200);
    expect(res.body.rows).toEqual(expectedRows(value, DAY_START, DAY_END, perVisit));
  });

  it('exit pages: each visit by its last page view', async () => {
    const res = await getStats(server, 'breakdown', q({ dimension: 'exit_page', limit: 100 }));
    const rows = new Map<string, number>();
    for (const visit of ALL_VISITS) {
      if (visit.start >= DAY_START && visit.start < DAY_END && visit.exit)
        rows.set(visit.exit, (rows.get(visit.exit) ?? 0) + 1);
    }
    const got = Object.fromEntries(
      (res.body.rows as { value: string; visits: number }[]).map((r) => [r.value, r.visits]),
    );
    expect(got).toEqual(Object.fromEntries(rows));
    expect(got['/d']).toBe(1); // v3's five-page visit left from /d
  });

  it('the shop’s own host is never a referrer; utm values belong to the visit', async () => {
    const res = await getStats(server, 'breakdown', q({ dimension: 'referrer', limit: 100 }));
    const values = (res.body.rows as { value: string }[]).map((r) => r.value);
    expect(values).not.toContain('shop.example');
    expect(values).not.toContain('www.shop.example');
    // v1's second page (internal) carries its visit's utm_source.
    const utm = await getStats(server, 'breakdown', q({ dimension: 'utm_source', limit: 100 }));
    const newsletter = (utm.body.rows as { value: string; events: number; visits: number }[]).find(
      (r) => r.value === 'newsletter',
    );
    expect(newsletter).toMatchObject({ events: 3, visits: 2 }); // v1's two pages and one channel case
  });

  it('filters combine: ; is and, | is or, != excludes; a filter on a visit keeps its events', async () => {
    const cases: [string, (e: RawEvent, v: RawVisit) => boolean][] = [
      ['country==DE|GB', (e) => e.country === 'DE' || e.country === 'GB'],
      ['country==DE|GB;device!=desktop', (e) => (e.country === 'DE' || e.country === 'GB') && e.device !== 'desktop'],
      ['channel==Organic Search;browser==Firefox', (e, v) => v.channel === 'Organic Search' && e.browser === 'Firefox'],
      ['os!=iOS|Android', (e) => e.os !== 'iOS' && e.os !== 'Android'],
    ];
    for (const [filters, keep] of cases) {
      const res = await getStats(server, 'summary', q({ filters }));
      expect(res.status, res.text).toBe(200);
      const { revenue: _r, botEvents: _b, goals: _g, ...totals } = res.body.totals;
      const expected = expectedTotals(DAY_START, DAY_END, keep);
      expect(totals, filters).toEqual({
        ...expected,
        visitDuration: expect.any(Number),
        bounceRate: expect.any(Number),
      });
      expect(totals.visitDuration, filters).toBeCloseTo(expected.visitDuration, 6);
    }
    // A visit's entry page: the visits that landed on `/`, all their events.
    const landed = await getStats(server, 'summary', q({ filters: 'entry_page==/' }));
    const entries = ALL_VISITS.filter((v) => v.entry === '/');
    expect(landed.body.totals.visits).toBe(entries.length);
    expect(landed.body.totals.events).toBe(entries.reduce((n, v) => n + v.events.length, 0));
    // Filters on a breakdown too: channels of German visitors on phones.
    const channels = await getStats(
      server,
      'breakdown',
      q({ dimension: 'channel', limit: 100, filters: 'country==DE;device==mobile' }),
    );
    expect(channels.body.rows).toEqual(channelRows((e) => e.country === 'DE' && e.device === 'mobile'));
  });

  it('refuses a bad filter with a 400 naming it', async () => {
    for (const filters of ['planet==Mars', 'country=DE', 'country==DE;;device']) {
      const res = await getStats(server, 'summary', q({ filters }));
      expect(res.status, filters).toBe(400);
      expect(res.body).toEqual({ message: expect.stringContaining('filters'), code: 'VALIDATION_ERROR' });
    }
  });
});

/** Channel rows over raw page views that `keep` keeps. */
function channelRows(keep: (e: RawEvent) => boolean) {
  const rows = new Map<string, { events: number; visitors: Set<string>; visits: Set<RawVisit> }>();
  for (const visit of ALL_VISITS) {
    for (const event of visit.events) {
      if (event.name !== 'PageView' || !keep(event)) continue;
      const row = rows.get(visit.channel) ?? { events: 0, visitors: new Set(), visits: new Set() };
      row.events += 1;
      row.visitors.add(visit.muid);
      row.visits.add(visit);
      rows.set(visit.channel, row);
    }
  }
  return [...rows]
    .map(([v, r]) => ({ value: v, events: r.events, visitors: r.visitors.size, visits: r.visits.size }))
    .sort((a, b) => b.events - a.events || (a.value < b.value ? -1 : 1));
}

describe('visitors now', () => {
  it('counts the visitors of the last 5 minutes and the page each is on', async () => {
    const now = Date.now();
    const recent = (muid: string, pages: [string, number][]) =>
      pages.map(([path, ago], i) => ({
        id: `${muid}-now-${i}`,
        muid,
        event_name: 'PageView',
        event_time: new Date(now - ago).toISOString(),
        data: { url: `${SHOP}${path}`, path, referrer: '' },
      }));
    const events = [
      ...recent('n1', [
        ['/', 4 * MINUTE],
        ['/cart', MINUTE],
      ]),
      ...recent('n2', [['/cart', 2 * MINUTE]]),
      ...recent('n3', [['/', 30_000]]),
      ...recent('gone', [['/old', 10 * MINUTE]]),
    ];
    const res = await api(server).post('/v1/collect', { tagId: tag.tagId, events }, { 'user-agent': UA.macFirefox });
    expect(res.status, res.text).toBe(202);
    const now5 = await api(server, server.partner.apiKey).get(
      `/v1/partners/stats/realtime?merchantId=${tag.merchantId}`,
    );
    expect(now5.status, now5.text).toBe(200);
    expect(now5.body).toEqual({
      visitors: 3,
      pageviews: 4,
      pages: [
        { value: '/cart', visitors: 2 },
        { value: '/', visitors: 1 },
      ],
    });
  });
});
