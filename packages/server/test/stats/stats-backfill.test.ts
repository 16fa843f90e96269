import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyRegisters, entryOf, mergeInto, registerOf, VisitorUnion } from '../../src/features/stats/sketch.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collectOk, preverifiedTag, type SentEvent } from '../helpers/fixtures.js';
import { getStats, query } from './stats-helpers.js';

// Migrations 0017 and 0027 build the aggregates of the events stored before them in SQL (0017 the
// 15-minute rows, 0027 new sketches, the all-names rows, hours and days, 0031 the dimensions'
// weeks, 0032 drops the dimensions' 15-minute rows, 0034 the buckets' and revenue's weeks). Their backfills, run
// again over events stored through /v1/collect, must give the very aggregates the fold
// (features/stats/fold.ts) kept: the same counts, sums, sketch registers and distinct hashes.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const statementsOf = (file: string) =>
  readFileSync(new URL(`../../src/db/migrations/${file}`, import.meta.url), 'utf8')
    .split('--> statement-breakpoint')
    .map((statement) => statement.trim())
    .filter((statement) => /CREATE TEMPORARY TABLE|^(--[^\n]*\n)*(INSERT INTO|UPDATE|DELETE FROM)/.test(statement));
const backfill = [
  ...statementsOf('0017_stats.sql'),
  ...statementsOf('0027_stat_rollups.sql'),
  ...statementsOf('0031_stat_dimension_weeks.sql'),
  ...statementsOf('0032_stat_dimension_quarters.sql'),
  ...statementsOf('0034_stat_bucket_weeks.sql'),
];

type Row = Record<string, unknown>;

/** The aggregates as comparable rows: counts and sums as text, sketches as their merged registers. */
async function snapshot(merchantId: string): Promise<{ buckets: string[]; dimensions: string[]; revenue: string[] }> {
  const registers = (value: unknown) => {
    const r = emptyRegisters();
    mergeInto(r, value as Uint8Array);
    const union = new VisitorUnion();
    union.add(value as Uint8Array);
    return `${Buffer.from(r).toString('base64')} ${union.count()}`;
  };
  const buckets = await query<Row>(
    server,
    sql`select grain, bucket::text as bucket, event_name, events::text as events, visitors from stat_buckets where merchant_id = ${merchantId}`,
  );
  const dimensions = await query<Row>(
    server,
    sql`select dimension, grain, bucket::text as bucket, value, events::text as events, visitors from stat_dimensions where merchant_id = ${merchantId}`,
  );
  const revenue = await query<Row>(
    server,
    sql`select grain, bucket::text as bucket, currency, purchases::text as purchases, amount::text as amount from stat_revenue where merchant_id = ${merchantId}`,
  );
  const lines = (rows: Row[]) =>
    rows
      .map(({ visitors, ...rest }) => JSON.stringify({ ...rest, ...(visitors ? { r: registers(visitors) } : {}) }))
      .sort();
  return { buckets: lines(buckets), dimensions: lines(dimensions), revenue: lines(revenue) };
}

describe('stats: the migration builds the aggregates of stored events', () => {
  it('gives what the live path kept', async () => {
    expect(backfill).toHaveLength(4 + 8 + 1 + 1 + 2);
    const tag = await preverifiedTag(server);
    const base = Date.UTC(2026, 7, 1, 9);
    const events: SentEvent[] = [];
    for (let i = 0; i < 600; i++) {
      const time = new Date(base + i * 97_000).toISOString();
      const muid = `b${i % 83}`;
      if (i % 3 === 0) {
        events.push({
          event_name: 'PageView',
          muid,
          event_time: time,
          data: {
            path: i % 9 === 0 ? `/p/${i % 5}` : '/',
            url:
              i % 2
                ? `https://shop.example/x?utm_source=news+${i % 3}&utm_medium=email&utm_campaign=c${i % 4}`
                : 'https://shop.example/x',
            referrer: ['', 'https://Google.COM:8443/search', 'http://user@ref.example/a?q=1', 'not a url'][i % 4],
          },
        });
      } else if (i % 5 === 0) {
        const value = [12.5, '7.25', 0.1, 'n/a', 1e21][i % 5];
        events.push({
          event_name: 'Purchase',
          muid,
          event_time: time,
          data: { value, currency: ['eur', 'USD', 'EURO', 'jpy'][i % 4] },
        });
      } else {
        events.push({ event_name: i % 2 ? 'AddToCart' : 'Search', muid, event_time: time, data: [1, 2] });
      }
    }
    for (let i = 0; i < events.length; i += 200) await collectOk(server, tag.tagId, events.slice(i, i + 200));
    // A stats read folds what is still pending first.
    const read = await getStats(server, 'summary', {
      merchantId: tag.merchantId,
      startDate: '2026-08-01',
      endDate: '2026-08-02',
    });
    expect(read.body.totals.events).toBe(events.length);
    const live = await snapshot(tag.merchantId);
    expect(live.buckets.length).toBeGreaterThan(50);
    expect(live.dimensions.length).toBeGreaterThan(50);
    expect(live.revenue.length).toBeGreaterThan(5);

    await server.app.deps.db.transaction(async (tx) => {
      await tx.execute(sql`delete from stat_buckets`);
      await tx.execute(sql`delete from stat_dimensions`);
      await tx.execute(sql`delete from stat_revenue`);
      for (const statement of backfill) await tx.execute(sql.raw(statement));
    });
    expect(await snapshot(tag.merchantId)).toEqual(live);
    // 600 events through /v1/collect, the fold and fifteen backfill statements: seconds alone, but
    // PGlite runs them on the test's own thread, and a loaded CI machine stretches them past 30 s.
  }, 120_000);
});

describe('stats: the registers the SQL makes are those of sketch.ts', () => {
  it('md5 index and rank agree for many muids', async () => {
    const muids = Array.from({ length: 2000 }, (_, i) => `m-${i}-${'x'.repeat(i % 40)}`);
    const rows = await query<{ muid: string; idx: number; rank: number; entry: string }>(
      server,
      sql`select muid,
        (((('x' || substr(md5(muid), 1, 8))::bit(32)::int) >> 18) & 16383) as idx,
        coalesce(nullif(position('1' in (('x' || substr(md5(muid), 9, 8))::bit(32))::text), 0), 33) as rank,
        encode(decode(substr(md5(muid), 1, 8) || lpad(to_hex(coalesce(nullif(position('1' in (('x' || substr(md5(muid), 9, 8))::bit(32))::text), 0), 33)), 2, '0'), 'hex'), 'hex') as entry
        from json_array_elements_text(${JSON.stringify(muids)}::json) as m(muid)`,
    );
    expect(rows.map((r) => Number(r.idx) * 64 + Number(r.rank))).toEqual(muids.map(registerOf));
    // The sparse entry (fold.ts FACT_COLUMNS): 32-bit hash and rank, as sketch.ts makes it.
    const hex = ({ hash, rank }: { hash: number; rank: number }) =>
      hash.toString(16).padStart(8, '0') + rank.toString(16).padStart(2, '0');
    expect(rows.map((r) => r.entry)).toEqual(muids.map((m) => hex(entryOf(m))));
  });
});
