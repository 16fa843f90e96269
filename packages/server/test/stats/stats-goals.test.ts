// Goals, funnels and attribution on journeys whose answers are known by construction: each figure
// the API gives is compared with the same one computed here over the raw events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';
import { getStats } from './stats-helpers.js';

const MINUTE = 60_000;
const _HOUR = 60 * MINUTE;
const T0 = Date.UTC(2026, 3, 2, 8); // 2026-04-02 08:00 UTC
const SHOP = 'https://shop.example';

interface Hit {
  /** Minutes after T0. */
  at: number;
  name: string;
  path?: string;
  query?: string;
  referrer?: string;
  value?: string;
  currency?: string;
}

/** Each visitor's hits in time order, and the channel of each of their visits. */
const VISITORS: Record<string, { hits: Hit[]; channels: string[] }> = {
  // In order within a day: sign-up, checkout, purchase.
  a: {
    hits: [
      { at: 0, name: 'PageView', path: '/', query: '?utm_source=news&utm_medium=email' },
      { at: 2, name: 'SignUp' },
      { at: 5, name: 'PageView', path: '/checkout/x/done' },
      { at: 6, name: 'Purchase', value: '10.00', currency: 'EUR' },
    ],
    channels: ['Email'],
  },
  // Blog pages; a checkout path one segment too deep for `*`.
  b: {
    hits: [
      { at: 10, name: 'PageView', path: '/blog/a/b', referrer: 'https://www.google.com/' },
      { at: 12, name: 'PageView', path: '/checkout/x/y/done' },
    ],
    channels: ['Organic Search'],
  },
  // Signs up, checks out 25 hours later: past a one-day window, within two.
  c: {
    hits: [
      { at: 20, name: 'PageView', path: '/signup' },
      { at: 21, name: 'SignUp' },
      { at: 21 + 25 * 60, name: 'PageView', path: '/checkout/z/done' },
    ],
    channels: ['Direct', 'Direct'],
  },
  // Out of order: checks out, then signs up.
  d: {
    hits: [
      { at: 30, name: 'PageView', path: '/checkout/d/done' },
      { at: 31, name: 'SignUp' },
    ],
    channels: ['Direct'],
  },
  // First visit from search, a second from an e-mail 4 hours later buys in two currencies.
  e: {
    hits: [
      { at: 40, name: 'PageView', path: '/', referrer: 'https://www.google.com/' },
      { at: 280, name: 'PageView', path: '/sale', query: '?utm_source=news&utm_medium=email' },
      { at: 282, name: 'Purchase', value: '30.00', currency: 'EUR' },
      { at: 283, name: 'Purchase', value: '5.00', currency: 'USD' },
    ],
    channels: ['Organic Search', 'Email'],
  },
  // Buys on a paid-social landing, comes back directly and buys nothing.
  f: {
    hits: [
      { at: 50, name: 'PageView', path: '/promo', query: '?fbclid=IwAR0' },
      { at: 52, name: 'Purchase', value: '7.50', currency: 'EUR' },
      { at: 300, name: 'PageView', path: '/' },
    ],
    channels: ['Paid Social', 'Direct'],
  },
};

interface RawEvent {
  muid: string;
  at: number;
  name: string;
  path: string;
  channel: string;
  visit: number;
  value?: string;
  currency?: string;
}

/** The raw events with their visits (30 minutes) and channels. */
const RAW: RawEvent[] = Object.entries(VISITORS).flatMap(([muid, { hits, channels }]) => {
  let visit = -1;
  let last = Number.NEGATIVE_INFINITY;
  return hits.map((hit) => {
    const at = T0 + hit.at * MINUTE;
    if (at - last > 30 * MINUTE) visit += 1;
    last = at;
    return {
      muid,
      at,
      name: hit.name,
      path: hit.path ?? '',
      channel: channels[visit]!,
      visit,
      value: hit.value,
      currency: hit.currency,
    };
  });
});

const GOALS = {
  signUp: { name: 'Signed up', eventName: 'SignUp' },
  checkout: { name: 'Checked out', pathPattern: '/checkout/*/done' },
  blog: { name: 'Read the blog', pathPattern: '/blog/**' },
  purchase: { name: 'Bought', eventName: 'Purchase' },
} as const;

const converts = (goal: (typeof GOALS)[keyof typeof GOALS], e: RawEvent) =>
  'eventName' in goal
    ? e.name === goal.eventName
    : e.name === 'PageView' &&
      new RegExp(
        `^${goal.pathPattern.replaceAll('**', '\u0001').replaceAll('*', '[^/]*').replaceAll('\u0001', '.*')}$`,
      ).test(e.path);

let server: TestServer;
let tag: GeneratedTag;
const ids: Record<keyof typeof GOALS, string> = { signUp: '', checkout: '', blog: '', purchase: '' };
const RANGE = { startDate: '2026-04-02', endDate: '2026-04-03' };

beforeAll(async () => {
  server = await startTestServer();
  tag = await preverifiedTag(server);
  for (const [muid, { hits }] of Object.entries(VISITORS)) {
    const events = hits.map((hit, i) => ({
      id: `${muid}-${i}`,
      muid,
      event_name: hit.name,
      event_time: new Date(T0 + hit.at * MINUTE).toISOString(),
      data:
        hit.name === 'PageView'
          ? { url: `${SHOP}${hit.path}${hit.query ?? ''}`, path: hit.path, referrer: hit.referrer ?? '' }
          : hit.value
            ? { value: hit.value, currency: hit.currency }
            : {},
    }));
    const res = await api(server).post('/v1/collect', { tagId: tag.tagId, events });
    expect(res.status, res.text).toBe(202);
  }
  // Goals made after the events: they apply to what is stored.
  for (const [key, goal] of Object.entries(GOALS)) {
    const res = await api(server, server.partner.apiKey).post(`/v1/partners/merchant/${tag.merchantId}/goals`, goal);
    expect(res.status, res.text).toBe(201);
    ids[key as keyof typeof GOALS] = res.body.goalId;
  }
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const q = (extra: Record<string, string | number> = {}) => ({ merchantId: tag.merchantId, ...RANGE, ...extra });

describe('goals', () => {
  it('summary: conversions by event and by path pattern, against all visitors', async () => {
    const res = await getStats(server, 'summary', q());
    expect(res.status, res.text).toBe(200);
    const all = new Set(RAW.map((e) => e.muid)).size;
    expect(res.body.totals.goals).toEqual(
      (Object.keys(GOALS) as (keyof typeof GOALS)[]).map((key) => {
        const hits = RAW.filter((e) => converts(GOALS[key], e));
        const visitors = new Set(hits.map((e) => e.muid)).size;
        return {
          goalId: ids[key],
          name: GOALS[key].name,
          conversions: hits.length,
          visitors,
          conversionRate: visitors / all,
        };
      }),
    );
    // By construction: `*` stays within a segment (b's /checkout/x/y/done does not count), `**` does not.
    const [, checkout, blog] = res.body.totals.goals;
    expect([checkout.conversions, blog.conversions]).toEqual([3, 1]);
  });

  it('breakdown by channel with a goal: conversions and rates per row', async () => {
    const res = await getStats(server, 'breakdown', q({ dimension: 'channel', goal: ids.purchase, limit: 100 }));
    expect(res.status, res.text).toBe(200);
    for (const row of res.body.rows as {
      value: string;
      visitors: number;
      conversions: number;
      conversionRate: number;
    }[]) {
      const events = RAW.filter((e) => e.channel === row.value);
      const bought = events.filter((e) => e.name === 'Purchase');
      const viewers = new Set(events.filter((e) => e.name === 'PageView').map((e) => e.muid));
      expect(row.visitors, row.value).toBe(viewers.size);
      expect(row.conversions, row.value).toBe(bought.length);
      expect(row.conversionRate, row.value).toBeCloseTo(new Set(bought.map((e) => e.muid)).size / viewers.size, 9);
    }
    expect(res.body.rows.find((r: { value: string }) => r.value === 'Email')).toMatchObject({ conversions: 3 });
  });

  it('refuses an unknown goal with 404 GOAL_NOT_FOUND', async () => {
    const res = await getStats(
      server,
      'breakdown',
      q({ dimension: 'channel', goal: '0b8e7c2a-3f5d-4e1b-9a6c-7d8e9f0a1b2c' }),
    );
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'GOAL_NOT_FOUND', message: expect.any(String) });
  });
});

describe('funnels', () => {
  /** Per step, visitors who reached it after the steps before, in order, within `windowMs` of their first. */
  function expected(steps: (keyof typeof GOALS)[], windowMs: number): number[] {
    const reached = steps.map(() => 0);
    for (const muid of Object.keys(VISITORS)) {
      const events = RAW.filter((e) => e.muid === muid);
      let best = 0;
      for (const start of events.filter((e) => converts(GOALS[steps[0]!], e))) {
        let level = 1;
        for (const e of events) {
          if (
            level < steps.length &&
            e.at > start.at &&
            e.at <= start.at + windowMs &&
            converts(GOALS[steps[level]!], e)
          )
            level += 1;
        }
        best = Math.max(best, level);
      }
      for (let i = 0; i < best; i++) reached[i]! += 1;
    }
    return reached;
  }

  it.each([
    ['P1D', 86_400_000],
    ['P2D', 2 * 86_400_000],
    ['PT10M', 10 * MINUTE],
  ])('in order within the window (%s); out of order and past it do not count', async (window, ms) => {
    const steps: (keyof typeof GOALS)[] = ['signUp', 'checkout', 'purchase'];
    const res = await api(server, server.partner.apiKey).get(
      `/v1/partners/stats/funnel?${new URLSearchParams({ ...q(), steps: steps.map((s) => ids[s]).join(','), window } as Record<string, string>)}`,
    );
    expect(res.status, res.text).toBe(200);
    const visitors = expected(steps, ms);
    expect(res.body.steps).toEqual(
      steps.map((key, i) => ({
        goalId: ids[key],
        name: GOALS[key].name,
        visitors: visitors[i],
        conversionRate: visitors[i]! / visitors[0]!,
        dropOff: i === 0 ? 0 : 1 - visitors[i]! / visitors[i - 1]!,
      })),
    );
    // By construction: a, c, d sign up; a then checks out and buys; c's checkout is 25 h later; d's came first.
    if (window === 'P1D') expect(visitors).toEqual([3, 1, 1]);
    if (window === 'P2D') expect(visitors).toEqual([3, 2, 1]);
  });

  it('refuses fewer than 2 steps, an unknown goal and a bad window', async () => {
    const get = (params: Record<string, string>) =>
      api(server, server.partner.apiKey).get(
        `/v1/partners/stats/funnel?${new URLSearchParams({ ...q(), ...params } as Record<string, string>)}`,
      );
    expect((await get({ steps: ids.signUp })).status).toBe(400);
    expect((await get({ steps: `${ids.signUp},0b8e7c2a-3f5d-4e1b-9a6c-7d8e9f0a1b2c` })).body.code).toBe(
      'GOAL_NOT_FOUND',
    );
    const bad = await get({ steps: `${ids.signUp},${ids.checkout}`, window: 'one day' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('window');
  });
});

describe('attribution', () => {
  /** Per value: visitors whose first (last) visit had it, and all those visitors' purchases. */
  function expected(model: 'first_touch' | 'last_touch') {
    const rows = new Map<string, { visitors: number; purchases: number; revenue: Map<string, number> }>();
    for (const muid of Object.keys(VISITORS)) {
      const events = RAW.filter((e) => e.muid === muid);
      const touch = (model === 'first_touch' ? events[0] : events.at(-1))!.channel;
      const row = rows.get(touch) ?? { visitors: 0, purchases: 0, revenue: new Map() };
      row.visitors += 1;
      for (const e of events.filter((x) => x.name === 'Purchase')) {
        row.purchases += 1;
        row.revenue.set(e.currency!, (row.revenue.get(e.currency!) ?? 0) + Number(e.value) * 100);
      }
      rows.set(touch, row);
    }
    return [...rows]
      .map(([value, r]) => ({
        value,
        visitors: r.visitors,
        purchases: r.purchases,
        revenue: [...r.revenue]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([currency, cents]) => ({ currency, amount: (cents / 100).toFixed(2) })),
      }))
      .sort((a, b) => b.purchases - a.purchases || b.visitors - a.visitors || (a.value < b.value ? -1 : 1));
  }

  it.each(['first_touch', 'last_touch'] as const)('%s by channel, across visits and currencies', async (model) => {
    const res = await api(server, server.partner.apiKey).get(
      `/v1/partners/stats/attribution?${new URLSearchParams({ ...q(), model, dimension: 'channel' } as Record<string, string>)}`,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.rows).toEqual(expected(model));
  });

  it('credits e’s two purchases to search first, to e-mail last', async () => {
    const first = expected('first_touch').find((r) => r.value === 'Organic Search');
    const last = expected('last_touch').find((r) => r.value === 'Email');
    expect(first).toMatchObject({
      purchases: 2,
      revenue: [
        { currency: 'EUR', amount: '30.00' },
        { currency: 'USD', amount: '5.00' },
      ],
    });
    expect(last).toMatchObject({
      purchases: 3,
      revenue: [
        { currency: 'EUR', amount: '40.00' },
        { currency: 'USD', amount: '5.00' },
      ],
    });
  });
});
