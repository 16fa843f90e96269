import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statsEngineOf } from '../../src/compose.js';
import { type Clickhouse, openClickhouse } from '../../src/db/clickhouse/client.js';
import { compactDayCounts } from '../../src/features/events/day-counts/compact-day-counts.js';
import { loadStoredEvents } from '../../src/features/stats/load.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collectOk, preverifiedTag, type SentEvent } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';
import { getStats, query } from './stats-helpers.js';

// How events reach the statistics (features/stats/transfer.ts, load.ts): each stored event counts
// exactly once whether a batch is retried, a process stops between PostgreSQL and ClickHouse (its
// outbox row's claim runs out: the recovery), or the events were stored before the statistics
// existed (the load); and a statistics read writes nothing to PostgreSQL.
let server: TestServer;
/** A second handle on the app's ClickHouse database (chDB, in this process's directory). */
let clickhouse: Clickhouse;

beforeAll(async () => {
  server = await startTestServer();
  const engine = statsEngineOf(server.app.deps.env, server.app.database);
  if (engine?.kind !== 'chdb') throw new Error('the test app keeps its statistics in chDB');
  clickhouse = await openClickhouse(engine);
}, 60_000);
afterAll(async () => {
  await clickhouse?.close();
  await server?.close();
});

const DAY = '2026-06-01';
const eventsOf = (prefix: string, n: number): SentEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`,
    muid: `${prefix}-v${i % 4}`,
    event_name: i % 3 === 0 ? 'Purchase' : 'PageView',
    event_time: `${DAY}T${String(8 + (i % 10)).padStart(2, '0')}:00:00.000Z`,
    data: i % 3 === 0 ? { value: 2, currency: 'EUR' } : { path: `/p${i % 5}` },
  }));

async function totals(merchantId: string) {
  const res = await getStats(server, 'summary', { merchantId, startDate: DAY, endDate: DAY });
  expect(res.status, res.text).toBe(200);
  return res.body.totals as { events: number; visitors: number; purchases: number; revenue: unknown[] };
}

/** The merchant's events stored straight into PostgreSQL (no outbox row); their seq range. */
async function storeStraight(merchantId: string, tagId: string, events: SentEvent[]) {
  const [range] = await query<{ first: string; last: string }>(
    server,
    sql`with ins as (
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select ${merchantId}::uuid, e.id, ${tagId}::uuid, e.muid, e.event_name, e.event_time, e.data::text
      from json_to_recordset(${JSON.stringify(events)}::json)
        as e(id text, muid text, event_name text, event_time timestamptz, data json)
      returning seq
    ) select min(seq)::text as first, max(seq)::text as last from ins`,
  );
  return { first: Number(range?.first), last: Number(range?.last) };
}

/** An outbox row whose claim ran out: what a process that stopped before sending leaves behind. */
async function leaveOutbox(merchantId: string, range: { first: number; last: number }) {
  await server.app.deps.db.execute(
    sql`insert into stats_outbox (merchant_id, first_seq, last_seq, claimed_until)
      values (${merchantId}::uuid, ${range.first}, ${range.last}, now() - interval '1 second')`,
  );
}

/** Recovers until the merchant's outbox is empty (the app's own recovery loop may take a row first). */
async function recoverAll(merchantId: string) {
  await server.app.deps.stats?.recover();
  await until('the outbox sent', async () => {
    const rows = await query(server, sql`select 1 from stats_outbox where merchant_id = ${merchantId}::uuid`);
    return rows.length === 0 ? true : undefined;
  });
}

const inClickhouse = async (merchantId: string) =>
  Number(
    (
      await clickhouse.query<{ n: string }>('SELECT count() AS n FROM events WHERE merchant_id = {m:UUID}', {
        m: merchantId,
      })
    )[0]?.n,
  );

describe('stats transfer', () => {
  it('counts a batch retried with the same event ids once', async () => {
    const tag = await preverifiedTag(server);
    const batch = eventsOf('retry', 30);
    await collectOk(server, tag.tagId, batch);
    // A client that did not see the 202 sends the batch again, twice at once.
    await Promise.all([collectOk(server, tag.tagId, batch), collectOk(server, tag.tagId, batch)]);
    await collectOk(server, tag.tagId, batch.slice(0, 10));
    expect(await totals(tag.merchantId)).toMatchObject({
      events: 30,
      visitors: 4,
      purchases: 10,
      revenue: [{ currency: 'EUR', amount: '20' }],
    });
    expect(await inClickhouse(tag.merchantId)).toBe(30);
  });

  it('recovers an outbox range whose claim ran out, once, whatever ClickHouse already holds of it', async () => {
    const tag = await preverifiedTag(server);
    // A crash between PostgreSQL and ClickHouse: the events and their outbox row, nothing sent.
    const unsent = await storeStraight(tag.merchantId, tag.tagId, eventsOf('crash', 12));
    await leaveOutbox(tag.merchantId, unsent);
    expect((await totals(tag.merchantId)).events).toBe(0);
    await recoverAll(tag.merchantId);
    expect((await totals(tag.merchantId)).events).toBe(12);
    expect(await server.app.deps.stats?.recover()).toBe(0);
    expect((await totals(tag.merchantId)).events).toBe(12);

    // A crash after the insert, before the outbox row went: ClickHouse holds all of the range.
    await leaveOutbox(tag.merchantId, unsent);
    await recoverAll(tag.merchantId);
    expect(await inClickhouse(tag.merchantId)).toBe(12);

    // ClickHouse holds part of a range (an insert cut short): the range is replaced, counted once.
    const partly = eventsOf('partly', 20);
    await collectOk(server, tag.tagId, partly);
    expect((await totals(tag.merchantId)).events).toBe(32);
    const seqs = (
      await query<{ seq: string }>(
        server,
        sql`select seq::text from events where merchant_id = ${tag.merchantId}::uuid and id like 'partly-%' order by seq`,
      )
    ).map((row) => Number(row.seq));
    await clickhouse.command('DELETE FROM events WHERE merchant_id = {m:UUID} AND seq IN {seqs:Array(UInt64)}', {
      m: tag.merchantId,
      seqs: seqs.slice(0, 8),
    });
    expect(await inClickhouse(tag.merchantId)).toBe(24);
    await leaveOutbox(tag.merchantId, { first: seqs[0]!, last: seqs.at(-1)! });
    await recoverAll(tag.merchantId);
    expect(await inClickhouse(tag.merchantId)).toBe(32);
    expect(await totals(tag.merchantId)).toMatchObject({ events: 32, visitors: 8, purchases: 11 });
  });

  it('loads events stored without an outbox row, once however often it runs', async () => {
    const tag = await preverifiedTag(server);
    const stored = eventsOf(`load-${randomUUID().slice(0, 6)}`, 25);
    await storeStraight(tag.merchantId, tag.tagId, stored);
    expect((await totals(tag.merchantId)).events).toBe(0);
    const stats = server.app.deps.stats;
    if (!stats) throw new Error('the test app has statistics');
    const progress = await loadStoredEvents(server.app.deps.db, stats);
    expect(progress.events).toBeGreaterThanOrEqual(25);
    expect(await totals(tag.merchantId)).toMatchObject({ events: 25, visitors: 4, purchases: 9 });
    await loadStoredEvents(server.app.deps.db, stats);
    expect(await totals(tag.merchantId)).toMatchObject({ events: 25, visitors: 4, purchases: 9 });
    expect(await inClickhouse(tag.merchantId)).toBe(25);
  });

  // PostgreSQL's table counters, per database; a backend reports its counts when it exits, so the
  // app's connections are ended (postgres.js opens new ones) before each reading.
  it.skipIf(!process.env.TEST_DATABASE_URL)('reads the statistics without writing to PostgreSQL', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, eventsOf('reads', 40));
    const range = { merchantId: tag.merchantId, startDate: DAY, endDate: DAY };
    const readAll = async () => {
      for (const compare of [undefined, 'previous']) {
        expect((await getStats(server, 'summary', { ...range, compare })).body.totals?.events).toBe(40);
      }
      for (const interval of ['hour', 'day', 'week', 'month']) {
        expect((await getStats(server, 'timeseries', { ...range, interval })).status).toBe(200);
      }
      for (const dimension of ['event_name', 'path', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign']) {
        expect((await getStats(server, 'breakdown', { ...range, dimension, limit: 2 })).status).toBe(200);
      }
      expect((await getStats(server, 'summary', { ...range, events: 'Purchase' })).body.totals?.events).toBe(14);
    };
    // Once first: the events sent and the API key cached (its last_used_at written); and the day
    // counts' deltas of the collected events compacted now rather than by the job meanwhile.
    await readAll();
    while ((await compactDayCounts(server.app.deps.db)) > 0) {}
    // Measured on a connection of the test's own, which writes nothing.
    const own = postgres(server.app.deps.env.DATABASE_URL as string, { max: 1, onnotice: () => {} });
    const written = async () => {
      await own`select pg_terminate_backend(pid, 5000) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`;
      await own`select pg_stat_clear_snapshot()`;
      const [row] = await own<
        { n: string }[]
      >`select sum(n_tup_ins + n_tup_upd + n_tup_del)::text as n from pg_stat_user_tables`;
      return Number(row?.n);
    };
    try {
      const before = await written();
      for (let i = 0; i < 3; i++) await readAll();
      expect(await written()).toBe(before);
    } finally {
      await own.end({ timeout: 2 });
    }
  });
});
