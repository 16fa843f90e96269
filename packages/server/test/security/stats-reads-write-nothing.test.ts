import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collectOk, type GeneratedTag, preverifiedTag, type SentEvent } from '../helpers/fixtures.js';
import { getStats } from '../stats/stats-helpers.js';

/**
 * Issue 51, finding 7: statistics reads grew a table without bound (`stat_point_visitors` gained a
 * row for each new range a read used, about 1M rows a day per key at the rate limit). A batch of
 * reads of every kind (summary with and without a filter and a comparison, every interval, every
 * dimension, zones with whole-hour, half-hour and 45-minute offsets and DST, one day to 400 days)
 * must write nothing to PostgreSQL: the same tables, the same row count in each, and on PostgreSQL
 * no row inserted, updated or deleted by anyone (`pg_stat_user_tables`).
 */
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
// A backend publishes its table counters when it goes idle, at most once a second, else at the
// latest 10 s later (PostgreSQL's PGSTAT_IDLE_INTERVAL); the day-count compaction runs every 5 s.
const QUIET_MS = onPostgres ? 11_000 : 6_000;

let server: TestServer;
let tag: GeneratedTag;

interface Snapshot {
  /** Every table (partitions included) and its row count. */
  rows: Record<string, number>;
  /** PostgreSQL only: rows inserted, updated and deleted in the database's tables, as published. */
  writes: number | null;
}

async function snapshot(): Promise<Snapshot> {
  const db = server.app.deps.db;
  const tables = rowsOf<{ name: string }>(
    await db.execute(sql`select format('%I.%I', n.nspname, c.relname) as name
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'r' and n.nspname not in ('pg_catalog', 'information_schema')
        and n.nspname not like 'pg\_toast%' and n.nspname not like 'pg\_temp%'
      order by 1`),
  ).map((row) => row.name);
  const rows: Record<string, number> = {};
  for (const table of tables) {
    const [row] = rowsOf<{ n: number }>(await db.execute(sql.raw(`select count(*)::int as n from ${table}`)));
    rows[table] = Number(row?.n);
  }
  let writes: number | null = null;
  if (onPostgres) {
    await db.execute(sql`select pg_stat_clear_snapshot()`);
    const [row] = rowsOf<{ n: string }>(
      await db.execute(
        sql`select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text as n from pg_stat_user_tables`,
      ),
    );
    writes = Number(row?.n);
  }
  return { rows, writes };
}

/** A snapshot once nothing has changed for QUIET_MS (every earlier write published and compacted). */
async function quietSnapshot(): Promise<Snapshot> {
  const deadline = Date.now() + 90_000;
  let last = await snapshot();
  let since = Date.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const next = await snapshot();
    if (JSON.stringify(next) !== JSON.stringify(last)) {
      last = next;
      since = Date.now();
    } else if (Date.now() - since >= QUIET_MS) {
      return last;
    }
    if (Date.now() > deadline) throw new Error('the database never went quiet');
  }
}

const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Europe/Berlin'];
const RANGES: Array<[string, string]> = [
  ['2026-03-08', '2026-03-08'], // New York's 23-hour day
  ['2026-11-01', '2026-11-07'],
  ['2026-01-01', '2026-01-31'],
  ['2025-11-02', '2026-12-06'], // 400 days
];

/** Every kind of read over every zone and range: [label, kind, query]. */
function reads(merchantId: string) {
  const out: Array<['summary' | 'timeseries' | 'breakdown', Record<string, string>]> = [];
  for (const timezone of ZONES) {
    for (const [startDate, endDate] of RANGES) {
      const base = { merchantId, timezone, startDate, endDate };
      const days = (Date.parse(endDate) - Date.parse(startDate)) / 86_400_000 + 1;
      out.push(['summary', base]);
      out.push(['summary', { ...base, compare: 'previous' }]);
      out.push(['summary', { ...base, events: 'Purchase,SignUp' }]);
      for (const interval of ['hour', 'day', 'week', 'month']) {
        if (interval === 'hour' && days > 31) continue;
        out.push(['timeseries', { ...base, interval }]);
      }
      out.push(['timeseries', { ...base, interval: 'day', events: 'PageView,Purchase', compare: 'previous' }]);
      for (const dimension of ['event_name', 'path', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign']) {
        out.push(['breakdown', { ...base, dimension, limit: '5' }]);
      }
    }
  }
  return out;
}

beforeAll(async () => {
  server = await startTestServer();
  tag = await preverifiedTag(server);
  // 780 events, two a day from 2025-10-28: page views with paths, referrers and utm values,
  // purchases with revenue, sign-ups; 60 visitors.
  const events: SentEvent[] = [];
  for (let i = 0; i < 780; i++) {
    const at = new Date(Date.UTC(2025, 9, 28) + i * 12 * 3_600_000 + (i % 7) * 600_000);
    const muid = `visitor-${i % 60}`;
    const kind = i % 5;
    if (kind === 3) {
      events.push({
        event_name: 'Purchase',
        event_time: at.toISOString(),
        muid,
        data: { value: 10 + i, currency: 'EUR' },
      });
    } else if (kind === 4) {
      events.push({ event_name: 'SignUp', event_time: at.toISOString(), muid });
    } else {
      events.push({
        event_name: 'PageView',
        event_time: at.toISOString(),
        muid,
        data: {
          path: `/p/${i % 23}`,
          referrer: `https://ref-${i % 11}.example/x`,
          url: `https://shop.example/p/${i % 23}?utm_source=s${i % 5}&utm_medium=m${i % 3}&utm_campaign=c${i % 9}`,
        },
      });
    }
  }
  for (let from = 0; from < events.length; from += 500)
    await collectOk(server, tag.tagId, events.slice(from, from + 500));
  // The statistics hold them all (a read also sends this process's queued events first).
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await getStats(server, 'summary', {
      merchantId: tag.merchantId,
      startDate: '2025-10-28',
      endDate: '2026-12-01',
    });
    if (res.status === 200 && res.body.totals.events === 780) break;
    if (Date.now() > deadline) throw new Error(`statistics not ready: ${res.status} ${res.text}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('statistics reads write nothing to PostgreSQL', () => {
  it('every kind of read, many zones and ranges: same tables, same rows, no row written', async () => {
    const before = await quietSnapshot();
    const batch = reads(tag.merchantId);
    const statuses: Record<string, number> = {};
    let next = 0;
    // Two at a time: a key's cap of reads in flight.
    await Promise.all(
      [0, 1].map(async () => {
        while (next < batch.length) {
          const [kind, query] = batch[next++] as (typeof batch)[number];
          const res = await getStats(server, kind, query);
          const key = `${kind} ${res.status}`;
          statuses[key] = (statuses[key] ?? 0) + 1;
          if (res.status !== 200) console.error(kind, JSON.stringify(query), res.status, res.text);
        }
      }),
    );
    const after = await quietSnapshot();
    const changed = Object.keys({ ...before.rows, ...after.rows }).filter((t) => before.rows[t] !== after.rows[t]);
    console.info(
      `stats-reads-write-nothing: ${batch.length} reads (${JSON.stringify(statuses)}); ` +
        `${Object.keys(after.rows).length} tables; rows changed in ${changed.length}` +
        (changed.length ? ` (${changed.map((t) => `${t} ${before.rows[t]} -> ${after.rows[t]}`).join(', ')})` : '') +
        (onPostgres ? `; rows written (pg_stat_user_tables) ${before.writes} -> ${after.writes}` : ''),
    );
    expect(Object.values(statuses).reduce((a, b) => a + b, 0)).toBe(batch.length);
    expect(Object.keys(statuses).every((key) => key.endsWith(' 200'))).toBe(true);
    expect(Object.keys(after.rows)).toEqual(Object.keys(before.rows));
    expect(after.rows).toEqual(before.rows);
    expect(after.writes).toBe(before.writes);
  }, 240_000);
});
