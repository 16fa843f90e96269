import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { FOLD_EVENTS, foldAllPendingStats, foldPass } from '../../src/features/stats/fold.js';
import { recountBuckets } from '../../src/features/stats/recount.js';
import { type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// The fold groups events in JavaScript (fold-rows.ts); the recount and the migrations' backfills
// group them in SQL (aggregateUpserts). Here the same events go through both and every row of
// every level must come out the same: counts, amounts, dimension values and the visitors' entries.
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp();
});
afterAll(() => app?.close());

const q = <T>(query: ReturnType<typeof sql>) => app.deps.db.execute(query).then((result) => rowsOf<T>(result));

const long = `/${'é'.repeat(150)}${'😀'.repeat(80)}`;
// Data the SQL rules read in more than one way: referrers with user info, ports, upper case or
// no host; utm values repeated, first, not after `?`/`&`, with `+` and escapes; values past 200
// characters (code points, some outside the BMP); data that is not an object; revenue as a
// number, a decimal string, an invalid string and in lower-case currencies.
const PAGES: unknown[] = [
  {
    path: '/a',
    referrer: 'https://User:pw@News.Example:8080/x?y',
    url: 'https://s.example/a?utm_source=mail+list&utm_medium=email',
  },
  { path: '/a', referrer: 'HTTP://Search.Example', url: 'https://s.example/?utm_source=a&utm_source=b#utm_medium=x' },
  { path: '/b', referrer: 'not a url', url: 'https://s.example/b?xutm_source=no&utm_campaign=%20sale%2B' },
  { path: '', referrer: 'https:///empty', url: 'https://s.example/?utm_medium=' },
  { path: long, referrer: 'android-app://com.example.app/', url: 42 },
  { path: 7, referrer: null },
  { referrer: 'https://a@b@c.example/' },
  ['not', 'an', 'object'],
  'text',
  { path: '/ünï', url: 'https://s.example/ünï?utm_campaign=été&utm_source=Ünï+Code' },
];
const PURCHASES: unknown[] = [
  { value: 10.5, currency: 'eur' },
  { value: '12.345', currency: 'EUR' },
  { value: '1e3', currency: 'USD' },
  { value: 3, currency: 'usd' },
  { value: 1, currency: 'EURO' },
  [1, 2],
];
// Quarters, hours, days and weeks apart, across a week's edge (weeks start on Thursdays).
const TIMES = [
  '2026-11-18T23:59:59Z',
  '2026-11-19T00:00:00Z',
  '2026-11-19T00:14:59.999Z',
  '2026-11-19T00:15:00Z',
  '2026-11-25T13:40:00Z',
];

async function snapshot(merchantId: string) {
  const key = sql`grain || ' ' || to_char(bucket at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI')`;
  const rows = await q<{ row: string; visitors: Uint8Array | null }>(sql`
    select 'b ' || ${key} || ' ' || event_name || ' ' || events as row, visitors from stat_buckets where merchant_id = ${merchantId}::uuid
    union all
    select 'd ' || ${key} || ' ' || dimension || ' ' || value || ' ' || events, visitors from stat_dimensions where merchant_id = ${merchantId}::uuid
    union all
    select 'r ' || ${key} || ' ' || currency || ' ' || purchases || ' ' || amount, null from stat_revenue where merchant_id = ${merchantId}::uuid`);
  // A sketch as its distinct 5-byte entries (the SQL keeps repeats across quarters until compaction).
  const entries = (v: Uint8Array | null) => {
    if (v === null) return '';
    const hex = Buffer.from(v).toString('hex');
    return [...new Set(hex.match(/.{10}/g) ?? [])].sort().join(',');
  };
  return rows.map((r) => `${r.row} ${entries(r.visitors)}`).sort();
}

describe('the fold (JavaScript) against the recount (SQL)', () => {
  it('builds the same rows at every level from the same events', async () => {
    const partner = await app.createPartner();
    const caller = app.caller(partner.apiKey);
    const { merchantId } = await caller.merchant.create({ name: 'Fold' });
    const { tagId } = await caller.tag.generate({ merchantId, domain: partner.domain });
    const events = TIMES.flatMap((time, t) => [
      ...PAGES.map((data, i) => ({
        id: `pv-${t}-${i}`,
        muid: `v${(t * 7 + i) % 5}`,
        event_name: 'PageView',
        event_time: time,
        data,
      })),
      ...PURCHASES.map((data, i) => ({
        id: `buy-${t}-${i}`,
        muid: `v${i}`,
        event_name: 'Purchase',
        event_time: time,
        data,
      })),
      { id: `sign-${t}`, muid: 'v9', event_name: 'SignUp', event_time: time, data: { path: '/ignored' } },
    ]);
    await app.caller().collect.ingest({ tagId, events: events as never });
    await foldAllPendingStats(app.deps.db);
    const folded = await snapshot(merchantId);
    expect(folded.filter((r) => r.startsWith('d 60 ') && r.includes(' path ')).length).toBeGreaterThan(5);
    expect(folded.some((r) => r.includes(' utm_source mail list '))).toBe(true);
    expect(folded.some((r) => r.includes(' referrer news.example:8080 '))).toBe(true);

    const quarters = await q<{ b: string }>(sql`
      select distinct date_bin('15 minutes', event_time, timestamptz '1970-01-01 00:00:00+00')::text as b
      from events where merchant_id = ${merchantId}::uuid`);
    await recountBuckets(
      app.deps.db,
      merchantId,
      quarters.map((r) => new Date(r.b).toISOString()),
    );
    expect(await snapshot(merchantId)).toEqual(folded);
  });
});

describe('one fold', () => {
  it('starts no range past FOLD_EVENTS events, takes a larger first range whole, and says when it was full', async () => {
    const partner = await app.createPartner();
    const { merchantId } = await app.caller(partner.apiKey).merchant.create({ name: 'Sizes' });
    const span = Math.ceil(FOLD_EVENTS * 0.6);
    // Ranges of seq numbers no event holds (a statement's unused numbers): nothing to count.
    const ranges = [FOLD_EVENTS * 2, span, span, span, 5].map((n, i) => [
      i * 10 * FOLD_EVENTS + 1,
      i * 10 * FOLD_EVENTS + n,
    ]);
    for (const [first, last] of ranges) {
      await app.deps.db.execute(sql`
        insert into stat_pending (merchant_id, first_seq, last_seq, first_time, last_time)
        values (${merchantId}::uuid, ${first}, ${last}, now(), now())`);
    }
    const pass = () => foldPass(app.deps.db, 100, true, merchantId);
    expect(await pass()).toEqual({ ranges: 1, full: true });
    expect(await pass()).toEqual({ ranges: 2, full: true });
    // The third span and the small one: over half of FOLD_EVENTS, full.
    expect(await pass()).toEqual({ ranges: 2, full: true });
    expect(await pass()).toEqual({ ranges: 0, full: false });
    await app.deps.db.execute(sql`
      insert into stat_pending (merchant_id, first_seq, last_seq, first_time, last_time)
      values (${merchantId}::uuid, 1, 5, now(), now())`);
    // A trickle: the job waits for the next wake-up instead of running again at once.
    expect(await pass()).toEqual({ ranges: 1, full: false });
  });
});
