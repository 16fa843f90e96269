import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { preverifiedTag, type SentEvent } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';
import { getStats, query } from './stats-helpers.js';

// Visitors are ClickHouse's `uniq`: within 1% of count(distinct muid) on 100k visitors (40k on PGlite),
// for the whole range, one day, and a breakdown row, after 100k+ events through /v1/collect; and
// exact below 65,536 a point (the hours).
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

// On PostgreSQL 100k visitors; on the embedded PGlite (the same SQL, one WASM thread beside the
// other test workers: 110 s for 100k) 40k, still far past the sketches' exact sparse range.
const VISITORS = process.env.TEST_DATABASE_URL ? 100_000 : 40_000;
/** Visitors' first events evenly over the three days. */
const STEP_MS = Math.floor((3 * 86_400_000) / VISITORS) - 1;

describe(`stats: visitors on ${VISITORS / 1000}k visitors`, () => {
  it('estimates within 1% of the exact distinct count', async () => {
    const tag = await preverifiedTag(server);
    const start = Date.UTC(2026, 4, 1);
    // Each visitor one page view over three days; every tenth comes back for a second page.
    const events: SentEvent[] = [];
    for (let i = 0; i < VISITORS; i++) {
      const time = new Date(start + ((i * STEP_MS) % (3 * 86_400_000))).toISOString();
      events.push({ event_name: 'PageView', muid: `visitor-${i}`, event_time: time, data: { path: `/p${i % 7}` } });
      if (i % 10 === 0)
        events.push({ event_name: 'PageView', muid: `visitor-${i}`, event_time: time, data: { path: '/back' } });
    }
    const batches: SentEvent[][] = [];
    for (let i = 0; i < events.length; i += 500) batches.push(events.slice(i, i + 500));
    // Each batch on a fresh connection: under load a pooled socket can sit idle past the server's
    // keep-alive timeout while the others of its group are stored, and a POST sent on it as the
    // server closes it meets ECONNRESET (not retried: the events carry no id).
    const post = async (batch: SentEvent[]) => {
      const res = await api(server).post('/v1/collect', { tagId: tag.tagId, events: batch }, { connection: 'close' });
      expect(res.status, res.text).toBe(202);
    };
    for (let i = 0; i < batches.length; i += 4) {
      await Promise.all(batches.slice(i, i + 4).map(post));
    }
    const exact = async (where: ReturnType<typeof sql>) =>
      Number(
        (
          await query<{ n: number }>(
            server,
            sql`select count(distinct muid)::int as n from events where merchant_id = ${tag.merchantId} and ${where}`,
          )
        )[0]!.n,
      );
    const within = (estimated: number, actual: number) => Math.abs(estimated - actual) / actual;

    // What is measured here is the estimate, not a read racing the transfer: the reads start once
    // the outbox of the merchant is empty.
    await until(
      'the transfer to the statistics',
      async () => {
        const [pending] = await query<{ n: number }>(
          server,
          sql`select count(*)::int as n from stats_outbox where merchant_id = ${tag.merchantId}::uuid`,
        );
        return pending?.n === 0 ? true : undefined;
      },
      240_000,
    );
    const q = { merchantId: tag.merchantId, startDate: '2026-05-01', endDate: '2026-05-03' };
    const summary = await getStats(server, 'summary', q);
    expect(summary.body.totals.events).toBe(events.length);
    const all = await exact(sql`true`);
    expect(all).toBe(VISITORS);
    expect(within(summary.body.totals.visitors, all)).toBeLessThan(0.01);

    const series = await getStats(server, 'timeseries', q);
    const secondDay = await exact(sql`event_time >= '2026-05-02T00:00:00Z' and event_time < '2026-05-03T00:00:00Z'`);
    expect(within(series.body.points[1].visitors, secondDay)).toBeLessThan(0.01);

    // Small ranges: every hour of the second day (about 1,400 visitors each on PostgreSQL: exact).
    const hours = await getStats(server, 'timeseries', {
      ...q,
      startDate: '2026-05-02',
      endDate: '2026-05-02',
      interval: 'hour',
    });
    const perHour = await query<{ h: string; n: number }>(
      server,
      sql`select to_char(date_trunc('hour', event_time at time zone 'UTC'), 'YYYY-MM-DD"T"HH24') as h, count(distinct muid)::int as n
        from events where merchant_id = ${tag.merchantId} and event_time >= '2026-05-02T00:00:00Z' and event_time < '2026-05-03T00:00:00Z'
        group by 1 order by 1`,
    );
    expect(hours.body.points.map((p: { visitors: number }) => p.visitors)).toEqual(perHour.map((r) => Number(r.n)));

    const paths = await getStats(server, 'breakdown', { ...q, dimension: 'path', limit: 3 });
    for (const row of paths.body.rows as { value: string; visitors: number }[]) {
      const n = await exact(sql`raw_data::jsonb->>'path' = ${row.value}`);
      expect(within(row.visitors, n), row.value).toBeLessThan(0.01);
    }
    const others = await exact(
      sql`raw_data::jsonb->>'path' not in (select json_array_elements_text(${JSON.stringify(paths.body.rows.map((r: { value: string }) => r.value))}::json))`,
    );
    expect(within(paths.body.other.visitors, others)).toBeLessThan(0.01);
    console.log(
      `visitors: estimated ${summary.body.totals.visitors} of ${all} (${((summary.body.totals.visitors / all - 1) * 100).toFixed(2)}%), ` +
        `day ${series.body.points[1].visitors} of ${secondDay}, other ${paths.body.other.visitors} of ${others}`,
    );
  }, 300_000);
});
