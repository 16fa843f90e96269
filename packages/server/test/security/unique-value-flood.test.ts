import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestPartner, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { collect, collectOk, type GeneratedTag, preverifiedTag, type SentEvent } from '../helpers/fixtures.js';
import { getStats } from '../stats/stats-helpers.js';

/**
 * Issue 51, finding 2: 20,000 page views with unique paths, referrers and utm values, sent by one
 * client with no key in 3-5 s, stopped the statistics' fold (its 5 s statement timeout, not drained
 * after 60-90 s) and every partner's erasures with it: work per event grew with the number of
 * distinct values. Whatever engine answers the statistics, such a flood to merchant A must not stop
 * or slow another partner's merchant B: B's visitor erasure completes within a bound (measured
 * before and after the flood), B's statistics answer, and A's own statistics count all of it.
 */
const FLOOD = 20_000;
const BATCH = 500;
/** How much longer B's erasure may take after the flood than before it (the job looks every 1.5 s here). */
const ERASURE_SLACK_MS = 4_000;
/** B's slowest summary while the flood is sent (one at a time; a few hundred ms on two shared cores). */
const STATS_BOUND_MS = 3_000;
const RANGE = { startDate: '2026-01-01', endDate: '2026-12-31', timezone: 'UTC' };

let server: TestServer;
let other: TestPartner;
let flooded: GeneratedTag;
let shop: GeneratedTag;

beforeAll(async () => {
  // Erasures start DB_STATEMENT_TIMEOUT + 0.5 s after they are asked for (as test/deletion/erasure.test.ts).
  server = await startTestServer({ env: { DB_STATEMENT_TIMEOUT: '1000' } });
  other = await server.createPartner('Other partner');
  flooded = await preverifiedTag(server);
  shop = await preverifiedTag(server, other);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

/** B's visitors: `count` page views and purchases each, on 2026-06-01. */
function visitorEvents(muids: string[]): SentEvent[] {
  return muids.flatMap((muid) =>
    ['PageView', 'Purchase'].map((name, i) => ({
      id: `${muid}-${name}-${randomBytes(3).toString('hex')}`,
      muid,
      event_name: name,
      event_time: `2026-06-01T10:0${i}:00.000Z`,
      data: name === 'Purchase' ? { value: 5, currency: 'EUR' } : { path: '/p' },
    })),
  );
}

/** Asks B's partner to erase `muid` from B, and waits until it completed; milliseconds taken. */
async function eraseOnB(muid: string): Promise<number> {
  const client = api(server, other.apiKey);
  const started = performance.now();
  const asked = await client.post('/v1/partners/erasures', { muid, merchantId: shop.merchantId });
  expect(asked.status).toBe(202);
  for (;;) {
    const got = await client.get(`/v1/partners/erasures/${asked.body.id}`);
    expect(got.status).toBe(200);
    if (got.body.status === 'completed') {
      expect(got.body.eventsDeleted).toBe(2);
      return Math.round(performance.now() - started);
    }
    if (performance.now() - started > 60_000) throw new Error(`erasure not completed in 60 s: ${got.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** B's summary over the range: it answers 200 with `events`. */
async function expectStatsOfB(events: number): Promise<number> {
  const started = performance.now();
  const res = await getStats(server, 'summary', { merchantId: shop.merchantId, ...RANGE }, other.apiKey);
  expect([res.status, res.body.totals?.events]).toEqual([200, events]);
  return Math.round(performance.now() - started);
}

describe('a flood of unique values to merchant A', () => {
  it("neither stops nor slows another partner's erasure and statistics; A's own are exact", async () => {
    await collectOk(server, shop.tagId, visitorEvents(['v1', 'v2', 'v3']));
    await expectStatsOfB(6);
    const baseline = await eraseOnB('v1');

    // The flood: one client, no key, unique path, referrer host, utm values and visitor per event.
    const run = randomBytes(4).toString('hex');
    const flood: SentEvent[] = Array.from({ length: FLOOD }, (_, i) => ({
      event_name: 'PageView',
      muid: `flood-${run}-${i}`,
      event_time: new Date(Date.UTC(2026, 5, 1) + i * 1_000).toISOString(),
      data: {
        path: `/flood/${run}/${i}`,
        referrer: `https://r${i}-${run}.example/from/${i}`,
        url: `https://shop.example/flood/${i}?utm_source=s${i}-${run}&utm_medium=m${i}-${run}&utm_campaign=c${i}-${run}`,
      },
    }));
    const floodStarted = performance.now();
    let next = 0;
    const statuses: number[] = [];
    const sending = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < FLOOD) {
          const from = next;
          next += BATCH;
          statuses.push((await collect(server, flooded.tagId, flood.slice(from, from + BATCH))).status);
        }
      }),
    );
    // B's statistics meanwhile, one read at a time.
    const during: number[] = [];
    let sent = false;
    void sending.finally(() => {
      sent = true;
    });
    while (!sent) during.push(await expectStatsOfB(4));
    await sending;
    const floodMs = Math.round(performance.now() - floodStarted);
    expect(statuses.every((status) => status === 202)).toBe(true);

    // At once: A's statistics count all of it (a process reads what it stored), B's answer, and
    // B's next visitor erasure completes about as fast as before the flood.
    const summary = await getStats(server, 'summary', { merchantId: flooded.merchantId, ...RANGE });
    const statsMs = await expectStatsOfB(4);
    await collectOk(server, shop.tagId, visitorEvents(['v4']));
    const afterFlood = await eraseOnB('v2');
    await expectStatsOfB(4);
    console.info(
      `unique-value-flood: ${FLOOD} page views in ${floodMs} ms; A's first summary after it counts ` +
        `${summary.body.totals?.pageviews}; B's summary ${statsMs} ms (during it: ${during.length} reads, ` +
        `slowest ${Math.max(...during)} ms); B's erasure ${baseline} ms before the flood, ` +
        `${afterFlood} ms after it`,
    );
    expect(summary.status).toBe(200);
    expect(summary.body.totals).toMatchObject({ events: FLOOD, pageviews: FLOOD });
    expect(Math.max(...during)).toBeLessThan(STATS_BOUND_MS);
    expect(afterFlood).toBeLessThan(baseline + ERASURE_SLACK_MS);
    for (const dimension of ['path', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign']) {
      const res = await getStats(server, 'breakdown', {
        merchantId: flooded.merchantId,
        ...RANGE,
        dimension,
        limit: 10,
      });
      expect(res.status).toBe(200);
      expect(res.body.rows).toHaveLength(10);
      expect(res.body.rows.every((row: { events: number }) => row.events === 1)).toBe(true);
      expect(res.body.other.events + 10).toBe(FLOOD);
    }
  }, 180_000);
});
