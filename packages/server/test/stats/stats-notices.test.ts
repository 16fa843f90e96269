// Digests and spikes as signed webhooks (issue 53): the digest's contents equal the stats API's
// answers to the same questions; a spike goes out once and not twice (the notice's key, across
// passes run at once); every webhook arrives through the outbox and the delivery worker, verified
// with the `standardwebhooks` library; test mode triggers both.
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatsStore } from '../../src/features/stats/store.js';
import { checkSpikes, sendDueDigests } from '../../src/features/stats-notices/passes.js';
import { createStatsNotices } from '../../src/jobs/stats-notices.js';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { getStats, query } from './stats-helpers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SHOP = 'https://shop.example';
const ZONE = 'Europe/Paris';
/** Monday 2026-11-30 06:30 in Paris (05:30 UTC): last week's digest is due. */
const MONDAY_0630 = Date.parse('2026-11-30T05:30:00Z');
/** The spike's hour: 2026-11-30 10:00 UTC. */
const SPIKE_HOUR = Date.parse('2026-11-30T10:00:00Z');

let server: TestServer;
let live: TestWebhookReceiver;
let test: TestWebhookReceiver;
let liveSecret: string;
let testSecret: string;
const deps = () => server.app.deps;

/** Every webhook the receiver got so far, each verified with the endpoint's secret. */
function verified(receiver: TestWebhookReceiver, secret: string): Json[] {
  return receiver.received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json);
}

async function merchantWithTag(key: string, timezone: string) {
  const created = await api(server, key).post('/v1/partners/merchant', { name: 'Notices', timezone });
  expect(created.status, created.text).toBe(201);
  const merchantId = created.body.merchantId as string;
  const tag = await api(server, key).post('/v1/partners/tag/generate', { merchantId, domain: server.partner.domain });
  expect(tag.status, tag.text).toBe(200);
  return { merchantId, tagId: tag.body.tagId as string };
}

interface Hit {
  muid: string;
  at: number;
  path?: string;
  query?: string;
  referrer?: string;
  name?: string;
}

let sequence = 0;
async function collect(tagId: string, hits: Hit[]) {
  const events = hits.map((hit) => ({
    id: `n-${sequence++}`,
    muid: hit.muid,
    event_name: hit.name ?? 'PageView',
    event_time: new Date(hit.at).toISOString(),
    data:
      (hit.name ?? 'PageView') === 'PageView'
        ? { url: `${SHOP}${hit.path ?? '/'}${hit.query ?? ''}`, path: hit.path ?? '/', referrer: hit.referrer ?? '' }
        : { value: '12.00', currency: 'EUR' },
  }));
  const res = await api(server).post('/v1/collect', { tagId, events });
  expect(res.status, res.text).toBe(202);
}

const patchSettings = (body: Json, key = server.partner.apiKey) =>
  api(server, key).request('PATCH', '/v1/partners/settings', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  server = await startTestServer({
    env: {
      WEBHOOK_DELIVERY: 'on',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
    },
  });
  live = await startWebhookReceiver();
  test = await startWebhookReceiver();
  const events = ['stats.digest', 'stats.spike'];
  const created = await api(server, server.partner.apiKey).post('/v1/partners/webhooks', { url: live.url, events });
  expect(created.status, created.text).toBe(201);
  liveSecret = created.body.secret;
  const testCreated = await api(server, server.partner.testApiKey).post('/v1/partners/webhooks', {
    url: test.url,
    events,
  });
  testSecret = testCreated.body.secret;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await live?.close();
  await test?.close();
});

describe('settings', () => {
  it('answers the statistics switches, off by default; PATCH sets them; multiple at least 1.5', async () => {
    const key = server.partner.testApiKey;
    expect((await api(server, key).get('/v1/partners/settings')).body).toEqual({
      defaultRetentionDays: null,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    const set = await patchSettings({ statsDigest: true, statsSpike: { multiple: 4.5 } }, key);
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ statsDigest: true, statsSpike: { enabled: false, multiple: 4.5 } });
    const low = await patchSettings({ statsSpike: { multiple: 1.2 } }, key);
    expect(low.status).toBe(400);
    expect(low.body.code).toBe('VALIDATION_ERROR');
    const text = await patchSettings({ statsDigest: 'yes' }, key);
    expect(text.status).toBe(400);
    expect((await patchSettings({ statsDigest: false }, key)).body.statsDigest).toBe(false);
  });
});

describe('stats.digest', () => {
  let merchantId: string;

  beforeAll(async () => {
    ({ merchantId } = await (async () => {
      const made = await merchantWithTag(server.partner.apiKey, ZONE);
      const week = Date.parse('2026-11-23T08:00:00Z'); // Monday of the week reported, 09:00 Paris
      const before = week - 7 * DAY;
      const hits: Hit[] = [
        { muid: 'a', at: week, path: '/', referrer: 'https://www.google.com/' },
        { muid: 'a', at: week + 60_000, path: '/shoes' },
        { muid: 'a', at: week + 120_000, name: 'Purchase' },
        { muid: 'b', at: week + DAY, path: '/shoes', query: '?utm_source=news&utm_medium=email' },
        { muid: 'c', at: week + 2 * DAY, path: '/hats' },
        { muid: 'd', at: week + 3 * DAY, path: '/', referrer: 'https://www.google.com/' },
        // Sunday 23:30 in Paris: the week's last half hour.
        { muid: 'e', at: Date.parse('2026-11-29T22:30:00Z'), path: '/late' },
        // Monday 00:30 in Paris (Sunday 23:30 UTC): the next week, not this one.
        { muid: 'f', at: Date.parse('2026-11-29T23:30:00Z'), path: '/next' },
        { muid: 'g', at: before, path: '/' },
        { muid: 'h', at: before + DAY, path: '/hats', name: 'PageView' },
        { muid: 'h', at: before + DAY + 60_000, name: 'Purchase' },
      ];
      await collect(made.tagId, hits);
      const goal = await api(server, server.partner.apiKey).post(`/v1/partners/merchant/${made.merchantId}/goals`, {
        name: 'Bought',
        eventName: 'Purchase',
      });
      expect(goal.status, goal.text).toBe(201);
      return made;
    })());
  }, 60_000);

  it('is not sent before Monday 06:00 in the zone, nor when the setting is off', async () => {
    expect((await sendDueDigests(deps(), { now: MONDAY_0630 })).sent).toBe(0); // setting off
    expect((await patchSettings({ statsDigest: true })).status).toBe(200);
    const early = await sendDueDigests(deps(), { now: MONDAY_0630 - HOUR }); // 05:30 Paris
    expect(early).toMatchObject({ sent: 0, failed: 0 });
    const lateTuesday = await sendDueDigests(deps(), { now: MONDAY_0630 + DAY }); // Tuesday 06:30: skipped
    expect(lateTuesday.sent).toBe(0);
  });

  it("is sent once, signed, with the stats API's answers for the week and the week before", async () => {
    const first = await sendDueDigests(deps(), { now: MONDAY_0630 });
    expect(first).toMatchObject({ sent: 1, failed: 0, more: false });
    // Again, and two at once: the notice's key lets none through.
    const again = await Promise.all([0, 1, 2].map(() => sendDueDigests(deps(), { now: MONDAY_0630 + 60_000 })));
    expect(again.map((r) => r.sent)).toEqual([0, 0, 0]);

    await live.waitFor(1, 15_000);
    const [digest] = verified(live, liveSecret);
    expect(digest).toMatchObject({ type: 'stats.digest', livemode: true });
    const data = digest.data;
    expect(data).toMatchObject({
      merchantId,
      timezone: ZONE,
      week: { startDate: '2026-11-23', endDate: '2026-11-29' },
    });
    const week = { merchantId, startDate: '2026-11-23', endDate: '2026-11-29', timezone: ZONE };
    const before = { ...week, startDate: '2026-11-16', endDate: '2026-11-22' };
    const summary = await getStats(server, 'summary', { ...week, compare: 'previous' });
    expect(summary.status, summary.text).toBe(200);
    expect(data.summary).toEqual(summary.body);
    for (const [field, dimension] of [
      ['topPages', 'path'],
      ['channels', 'channel'],
    ] as const) {
      for (const [which, range] of [
        ['current', week],
        ['previous', before],
      ] as const) {
        const answer = await getStats(server, 'breakdown', { ...range, dimension, limit: 10 });
        expect(answer.status, answer.text).toBe(200);
        expect(data[field][which], `${field}.${which}`).toEqual(answer.body);
      }
    }
    // By construction: 5 visitors in the week (f is next week's), 2 before; the goal 1 and 1.
    expect(data.summary.totals.visitors).toBe(5);
    expect(data.summary.previous.totals.visitors).toBe(2);
    expect(data.summary.totals.goals[0]).toMatchObject({ name: 'Bought', conversions: 1 });
    expect(data.topPages.current.rows.map((r: Json) => r.value)).not.toContain('/next');
    expect(data.channels.current.rows.map((r: Json) => r.value)).toEqual(
      expect.arrayContaining(['Organic Search', 'Email', 'Direct']),
    );
    const rows = await query<{ n: number }>(
      server,
      sql`select count(*)::int as n from stats_notices where merchant_id = ${merchantId}::uuid and kind = 'digest'`,
    );
    expect(rows[0]!.n).toBe(1);
    // Nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(live.received.length).toBe(1);
  });
});

describe('stats.spike', () => {
  let merchantId: string;
  let tagId: string;
  const visitors = (prefix: string, n: number, at: number): Hit[] =>
    Array.from({ length: n }, (_, i) => ({ muid: `${prefix}-${i}`, at: at + i * 60_000, path: '/' }));

  beforeAll(async () => {
    ({ merchantId, tagId } = await merchantWithTag(server.partner.apiKey, 'UTC'));
    const week = 7 * DAY;
    await collect(tagId, [
      ...visitors('now', 12, SPIKE_HOUR),
      ...visitors('w1', 2, SPIKE_HOUR - week),
      ...visitors('w2', 3, SPIKE_HOUR - 2 * week),
      ...visitors('w3', 2, SPIKE_HOUR - 3 * week),
      ...visitors('w4', 4, SPIKE_HOUR - 4 * week),
      // The next hour: a spike too, the same day.
      ...visitors('next', 15, SPIKE_HOUR + HOUR),
    ]);
  }, 60_000);

  const spikesSent = async () =>
    (
      await query<{ n: number }>(
        server,
        sql`select count(*)::int as n from stats_notices where merchant_id = ${merchantId}::uuid and kind = 'spike'`,
      )
    )[0]!.n;

  it('is not sent below the multiple', async () => {
    const before = live.received.length;
    expect((await patchSettings({ statsSpike: { enabled: true, multiple: 10 } })).status).toBe(200);
    const result = await checkSpikes(deps(), SPIKE_HOUR, { now: SPIKE_HOUR + HOUR + 5 * 60_000 });
    expect(result.failed).toBe(0);
    expect(result.sent).toBe(0);
    expect(await spikesSent()).toBe(0);
    expect(live.received.length).toBe(before);
  });

  it('fires once and not twice: passes at once, again, and a later hour of the same day', async () => {
    const before = live.received.length;
    expect((await patchSettings({ statsSpike: { multiple: 3 } })).status).toBe(200);
    const now = SPIKE_HOUR + HOUR + 5 * 60_000;
    const passes = await Promise.all([0, 1, 2].map(() => checkSpikes(deps(), SPIKE_HOUR, { now })));
    expect(passes.reduce((sum, r) => sum + r.sent, 0)).toBe(1);
    expect((await checkSpikes(deps(), SPIKE_HOUR, { now })).sent).toBe(0);
    expect((await checkSpikes(deps(), SPIKE_HOUR + HOUR, { now: now + HOUR })).sent).toBe(0);
    expect(await spikesSent()).toBe(1);

    await live.waitFor(before + 1, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const spikes = verified(live, liveSecret).filter((w) => w.type === 'stats.spike');
    expect(spikes).toHaveLength(1);
    expect(spikes[0]!.data).toEqual({
      merchantId,
      timezone: 'UTC',
      hour: { start: new Date(SPIKE_HOUR).toISOString(), end: new Date(SPIKE_HOUR + HOUR).toISOString() },
      visitors: 12,
      previousWeeks: [2, 3, 2, 4],
      median: 2.5,
      multiple: 3,
    });
    // The hour's visitors as the hourly timeseries counts them.
    const series = await api(server, server.partner.apiKey).get(
      `/v1/partners/stats/timeseries?merchantId=${merchantId}&startDate=2026-11-30&endDate=2026-11-30&interval=hour`,
    );
    expect(series.status, series.text).toBe(200);
    const point = series.body.points.find((p: Json) => Date.parse(p.start) === SPIKE_HOUR);
    expect(point.visitors).toBe(12);
  });

  it('the next day may fire again', async () => {
    // 2026-12-01 10:00 UTC has no events: nothing to send, and the day is still open.
    expect((await checkSpikes(deps(), SPIKE_HOUR + DAY, { now: SPIKE_HOUR + DAY + HOUR })).sent).toBe(0);
    expect(await spikesSent()).toBe(1);
  });
});

describe('the walks', () => {
  it('a merchant whose read hangs is given up at its deadline; the next one gets its spike', async () => {
    const hour = Date.parse('2026-12-02T10:00:00Z');
    const stuck = await merchantWithTag(server.partner.apiKey, 'UTC');
    const spiking = await merchantWithTag(server.partner.apiKey, 'UTC');
    await collect(
      spiking.tagId,
      Array.from({ length: 11 }, (_, i) => ({ muid: `s-${i}`, at: hour + i * 60_000 })),
    );
    await collect(
      stuck.tagId,
      Array.from({ length: 11 }, (_, i) => ({ muid: `x-${i}`, at: hour + i * 60_000 })),
    );
    const store = deps().stats as StatsStore;
    const hanging = new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'hourVisitors') {
          return (principal: string, merchantId: string, hours: readonly number[]) =>
            merchantId === stuck.merchantId ? new Promise(() => {}) : store.hourVisitors(principal, merchantId, hours);
        }
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const started = Date.now();
    const result = await checkSpikes({ ...deps(), stats: hanging }, hour, {
      now: hour + HOUR + 5 * 60_000,
      merchantTimeoutMs: 3_000,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.failed).toBe(1);
    const sent = await query<{ merchant_id: string }>(
      server,
      sql`select merchant_id::text from stats_notices where kind = 'spike' and period = '2026-12-02'`,
    );
    expect(sent.map((r) => r.merchant_id)).toEqual([spiking.merchantId]);
  });

  it('the job sends a digest on its own when Monday 06:00 comes in the merchant zone', async () => {
    const tokyo = await merchantWithTag(server.partner.apiKey, 'Asia/Tokyo');
    await collect(tokyo.tagId, [{ muid: 'j', at: Date.parse('2026-11-25T03:00:00Z'), path: '/tokyo' }]);
    const before = live.received.length;
    // Monday 2026-11-30 06:30 in Tokyo is Sunday 21:30 UTC.
    const { digests, spikes } = createStatsNotices({
      deps: deps(),
      logger: server.app.deps.logger,
      intervalMs: 100,
      now: () => Date.parse('2026-11-29T21:30:00Z'),
    });
    digests.start();
    try {
      await live.waitFor(before + 1, 15_000);
    } finally {
      await digests.stop();
      await spikes.stop();
    }
    const digest = verified(live, liveSecret).at(-1)!;
    expect(digest).toMatchObject({
      type: 'stats.digest',
      data: { merchantId: tokyo.merchantId, timezone: 'Asia/Tokyo', week: { startDate: '2026-11-23' } },
    });
    expect(digest.data.summary.totals.visitors).toBe(1);
  });
});

describe('test mode: trigger', () => {
  it('sends a test merchant’s digest and spike now, signed, the data as answered; a live key gets 403', async () => {
    const key = server.partner.testApiKey;
    const { merchantId, tagId } = await merchantWithTag(key, 'America/New_York');
    await collect(tagId, [{ muid: 't', at: Date.now() - 3 * DAY, path: '/test' }]);
    const digest = await api(server, key).post(`/v1/partners/test/merchants/${merchantId}/trigger`, {
      event: 'stats.digest',
    });
    expect(digest.status, digest.text).toBe(200);
    expect(digest.body).toMatchObject({
      type: 'stats.digest',
      deliveries: 1,
      data: { merchantId, timezone: 'America/New_York' },
    });
    const spike = await api(server, key).post(`/v1/partners/test/merchants/${merchantId}/trigger`, {
      event: 'stats.spike',
    });
    expect(spike.status, spike.text).toBe(200);
    expect(spike.body).toMatchObject({ type: 'stats.spike', deliveries: 1, data: { merchantId, multiple: 4.5 } });
    await test.waitFor(2, 15_000);
    const received = verified(test, testSecret);
    expect(received.map((w) => [w.type, w.livemode])).toEqual([
      ['stats.digest', false],
      ['stats.spike', false],
    ]);
    expect(received[0]!.data).toEqual(digest.body.data);
    expect(received[1]!.data).toEqual(spike.body.data);
    // The week is the last whole one in the merchant's zone, as the summary answers it.
    const summary = await getStats(
      server,
      'summary',
      { ...digest.body.data.week, merchantId, timezone: 'America/New_York', compare: 'previous' },
      key,
    );
    expect(digest.body.data.summary).toEqual(summary.body);

    const refused = await api(server, server.partner.apiKey).post(`/v1/partners/test/merchants/${merchantId}/trigger`, {
      event: 'stats.digest',
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('TEST_MODE_ONLY');
  });
});
