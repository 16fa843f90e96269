import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { compactDayCounts } from '../../src/features/events/day-counts/compact-day-counts.js';
import { expireRound } from '../../src/features/events/retention/expire-events.js';
import { type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// event_day_counts as delta rows (migration 0029, docs/decisions/day-count-deltas.md): exact sums
// through inserts, deletes, moves, retention and compaction, and two writers of one merchant that
// do not wait for each other (PostgreSQL: PGlite has one connection).
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp();
});
afterAll(() => app?.close());

const db = () => app.deps.db;
const DAY = 86_400_000;
const DAY0 = Date.UTC(2026, 4, 10);

async function merchant() {
  const p = await app.createPartner();
  const caller = app.caller(p.apiKey);
  const { merchantId } = await caller.merchant.create({ name: 'counted' });
  return { merchantId, caller };
}

let serial = 0;
/** One INSERT statement of events (and their ids) over the given (day offset, name) pairs. */
function insertSql(merchantId: string, rows: [number, string][]) {
  const values = rows.map(([day, name]) => {
    const id = `dc-${++serial}`;
    const time = new Date(DAY0 + day * DAY + (serial % 1000) * 1000).toISOString();
    return { id, name, time };
  });
  return {
    events: sql`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      values ${sql.join(
        values.map(
          (v) =>
            sql`(${merchantId}::uuid, ${v.id}, ${randomUUID()}::uuid, 'm', ${v.name}, ${v.time}::timestamptz, '{}')`,
        ),
        sql`, `,
      )}`,
    ids: sql`insert into event_ids (merchant_id, id, event_time) values ${sql.join(
      values.map((v) => sql`(${merchantId}::uuid, ${v.id}, ${v.time}::timestamptz)`),
      sql`, `,
    )}`,
  };
}

async function insert(merchantId: string, rows: [number, string][]) {
  const q = insertSql(merchantId, rows);
  await db().execute(q.events);
  await db().execute(q.ids);
}

/** Keys whose summed day count differs from the events (either side), for one merchant. */
async function mismatches(merchantId: string) {
  return rowsOf(
    await db().execute(sql`
      with actual as (
        select day, event_name, count(*)::int as n from (
          select (event_time at time zone 'UTC')::date as day, event_name from events where merchant_id = ${merchantId}::uuid
        ) e group by 1, 2
      ), kept as (
        select day, event_name, sum(n)::int as n from event_day_counts where merchant_id = ${merchantId}::uuid
        group by 1, 2 having sum(n) <> 0
      )
      select * from (table actual except table kept) a union all select * from (table kept except table actual) b`),
  );
}

async function rowsPerKey(merchantId: string): Promise<number> {
  const [row] = rowsOf<{ most: number | null }>(
    await db().execute(sql`select max(c)::int as most from (
      select count(*) as c from event_day_counts where merchant_id = ${merchantId}::uuid group by day, event_name) k`),
  );
  return row?.most ?? 0;
}

/** Compacts until nothing is left unmerged (the app's own job may hold the lock for a moment). */
async function compactAll() {
  for (let i = 0; i < 200; i++) {
    await compactDayCounts(db());
    const [left] = rowsOf<{ n: number }>(
      await db().execute(sql`select count(*)::int as n from event_day_counts where not merged`),
    );
    if (left?.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('day counts still unmerged after 200 passes');
}

describe('event_day_counts as delta rows', () => {
  it('sums exactly through inserts, deletes, moves, retention and compaction', async () => {
    const { merchantId, caller } = await merchant();
    const other = await merchant();
    for (let s = 0; s < 6; s++)
      await insert(merchantId, [
        [0, 'PageView'],
        [0, 'PageView'],
        [1, 'Purchase'],
        [s % 3, 'Search'],
      ]);
    await insert(other.merchantId, [[0, 'PageView']]);
    // One row per key per statement, no merging on the write path.
    expect(await rowsPerKey(merchantId)).toBeGreaterThanOrEqual(6);
    expect(await mismatches(merchantId)).toEqual([]);

    await db().execute(sql`delete from events where merchant_id = ${merchantId}::uuid and event_name = 'Search'
      and event_time < ${new Date(DAY0 + DAY).toISOString()}::timestamptz`);
    await db().execute(sql`update events set event_time = event_time + interval '3 days', event_name = 'Moved'
      where merchant_id = ${merchantId}::uuid and id in (select id from events where merchant_id = ${merchantId}::uuid and event_name = 'Purchase' limit 2)`);
    expect(await mismatches(merchantId)).toEqual([]);

    await compactAll();
    expect(await rowsPerKey(merchantId)).toBe(1);
    expect(await mismatches(merchantId)).toEqual([]);
    expect(await mismatches(other.merchantId)).toEqual([]);

    // Retention (day 0 expires), then appends on merged keys, then compaction again.
    const cutoff = new Date(DAY0 + DAY).toISOString();
    await expireRound(
      db(),
      { merchantId, days: 1, startedAt: new Date().toISOString(), cutoff, lease: 'by hand' },
      1000,
    );
    await insert(merchantId, [
      [1, 'Purchase'],
      [2, 'Search'],
    ]);
    expect(await mismatches(merchantId)).toEqual([]);
    await compactAll();
    expect(await mismatches(merchantId)).toEqual([]);
    // Keys that merged to zero (day 0, gone with retention) leave no row.
    const [zero] = rowsOf<{ n: number }>(
      await db().execute(
        sql`select count(*)::int as n from event_day_counts where merchant_id = ${merchantId}::uuid and n = 0`,
      ),
    );
    expect(zero?.n).toBe(0);

    // The list's total reads the sums.
    const [total] = rowsOf<{ n: number }>(
      await db().execute(sql`select count(*)::int as n from events where merchant_id = ${merchantId}::uuid`),
    );
    const listed = await caller.events.list({ merchantId, startDate: '2026-01-01', endDate: '2026-12-31' });
    expect(listed.pagination.totalItems).toBe(total?.n);
  });

  const url = process.env.TEST_DATABASE_URL;
  it.skipIf(!url)('lets two writers of one merchant and key commit without waiting for each other', async () => {
    const { merchantId } = await merchant();
    const held = postgres(url as string, { max: 1, onnotice: () => {} });
    const second = postgres(url as string, { max: 1, onnotice: () => {} });
    let release: () => void = () => {};
    try {
      await insert(merchantId, [[0, 'PageView']]);
      await compactAll();
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let opened!: () => void;
      const isOpen = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const first = held.begin(async (tx) => {
        const q = insertSql(merchantId, [
          [0, 'PageView'],
          [0, 'PageView'],
        ]);
        await tx.unsafe(...toUnsafe(q.events));
        opened();
        await released;
      });
      await isOpen;
      // The same (merchant, day, name) while the first transaction holds its rows: with 0003's
      // upsert this waited for the first commit (lock_timeout would fail it).
      await second.begin(async (tx) => {
        await tx.unsafe(`set local lock_timeout = '500ms'`);
        const q = insertSql(merchantId, [
          [0, 'PageView'],
          [0, 'Purchase'],
        ]);
        await tx.unsafe(...toUnsafe(q.events));
      });
      expect(await mismatches(merchantId)).toEqual([]);
      // A compaction meanwhile merges only what it sees; the open transaction's rows stay apart.
      await compactAll();
      release();
      await first;
      expect(await mismatches(merchantId)).toEqual([]);
      await compactAll();
      expect(await mismatches(merchantId)).toEqual([]);
      expect(await rowsPerKey(merchantId)).toBe(1);
    } finally {
      release();
      await held.end({ timeout: 2 });
      await second.end({ timeout: 2 });
    }
  });
});

/** A drizzle query as (text, params) for postgres.js' unsafe(). */
function toUnsafe(query: ReturnType<typeof sql>): [string, never[]] {
  const built = new PgDialect().sqlToQuery(query);
  return [built.sql, built.params as never[]];
}
