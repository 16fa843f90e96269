import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { type PgReplica, pgReplicaAvailable, startPgReplica } from '../../src/testing/pg-replica.mjs';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/event-log.js';
import { collectOk, listEvents, preverifiedTag } from '../helpers/fixtures.js';
import { getStats } from '../stats/stats-helpers.js';

/**
 * Reads from a streaming replica (DATABASE_READ_URL, db/read-routing.ts) on a primary and a replica
 * of our own on loopback (src/testing/pg-replica.mjs): the event list and the export are served by
 * the replica, as its own pg_stat_statements shows, and nothing else is; the statistics read
 * ClickHouse, with their merchant check on the primary, so a paused or stopped replica never holds
 * them back; a replica that stops replaying is used until DB_READ_MAX_LAG, a refusal there is
 * checked on the primary; a stopped replica costs no failed answer; the lag is on /metrics.
 */
const reason = !process.env.TEST_DATABASE_URL
  ? 'TEST_DATABASE_URL is unset (the replica test needs PostgreSQL 15 programs and runs with the PostgreSQL suite)'
  : !pgReplicaAvailable()
    ? 'initdb/pg_ctl/pg_basebackup of PostgreSQL 15 are not installed'
    : null;
if (reason) console.warn(`replica test skipped: ${reason}`);

const MAX_LAG_MS = 4_000;
const RANGE = { startDate: '2026-01-01', endDate: '2026-12-31', timezone: 'UTC' };

describe.skipIf(reason !== null)('reads from a streaming replica', () => {
  let pair: PgReplica;
  let server: TestServer;
  let onPrimary: postgres.Sql;
  let onReplica: postgres.Sql;
  let merchantId: string;
  let tagId: string;

  /** Calls per kind of statement on one server, from its pg_stat_statements (the app's database only). */
  const statements = async (sql: postgres.Sql) =>
    sql<{ query: string; calls: number }[]>`select query, calls::int as calls from pg_stat_statements
      where dbid = (select oid from pg_database where datname = 'app')`;
  const callsOf = (rows: { query: string; calls: number }[], test: (query: string) => boolean) =>
    rows.filter((row) => test(row.query)).reduce((sum, row) => sum + row.calls, 0);
  // The list's and the export's statements (their rows' times made text), the list's count and access check.
  const isListOrExport = (q: string) =>
    (q.includes('to_char(') && /\b(from|join) events\b/.test(q)) || q.includes('as tagged');
  // The lag checks, and what postgres.js asks once per connection (the array types).
  const isProbe = (q: string) =>
    /pg_last_wal_replay_lsn|pg_is_in_recovery|pg_stat_statements|pg_catalog\.pg_type/.test(q);

  const metric = async (name: string, labels = '') => {
    const { body } = await server.app.deps.metrics.render();
    const line = body.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const reads = (route: string, target: string) =>
    metric('partner_tags_db_reads_total', `route="${route}",target="${target}"`);
  const fallbacks = (route: string, why: string) =>
    metric('partner_tags_db_replica_fallbacks_total', `route="${route}",reason="${why}"`);

  /** The list, an export and the three statistics; each must answer 200 with the events sent. */
  const readEverything = async (expected: number) => {
    const list = await listEvents(server, merchantId, { limit: 100 });
    expect(list.status).toBe(200);
    expect(list.body.pagination.total).toBe(expected);
    const exported = await api(server, server.partner.apiKey).get(
      `/v1/partners/events/export?merchantId=${merchantId}`,
    );
    expect(exported.status).toBe(200);
    expect(exported.text.trim().split('\n').at(-1)).toContain(`"complete":true,"count":${expected}`);
    const summary = await getStats(server, 'summary', { merchantId, ...RANGE });
    expect(summary.status).toBe(200);
    expect(summary.body.totals.events).toBe(expected);
    expect((await getStats(server, 'timeseries', { merchantId, ...RANGE, interval: 'month' })).status).toBe(200);
    expect((await getStats(server, 'breakdown', { merchantId, ...RANGE, dimension: 'event_name' })).status).toBe(200);
  };

  /** Median milliseconds of `n` statistics summaries (a figure for docs/decisions/replica-reads.md). */
  const summaryMs = async (n = 20) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      expect((await getStats(server, 'summary', { merchantId, ...RANGE })).status).toBe(200);
      times.push(performance.now() - started);
    }
    return times.sort((x, y) => x - y)[Math.floor(n / 2)] as number;
  };

  let sent = 0;
  const send = async (count: number) => {
    const events = Array.from({ length: count }, (_, i) => ({
      event_name: i % 2 ? 'PageView' : 'Purchase',
      event_time: `2026-03-0${1 + (i % 5)}T10:00:00.000Z`,
      data: i % 2 ? { path: `/p${i}` } : { value: 10, currency: 'EUR' },
    }));
    await collectOk(server, tagId, events);
    sent += count;
    // Counted on the primary: a paused replica must not see them.
    await waitFor(
      async () =>
        (await onPrimary`select count(*)::int as n from events where merchant_id = ${merchantId}`)[0]?.n === sent,
      10_000,
      'the events stored',
    );
  };

  beforeAll(async () => {
    const started = performance.now();
    pair = await startPgReplica();
    const admin = postgres(pair.primaryUrl(), { max: 1, onnotice: () => {} });
    await admin`create database app`;
    await admin.end();
    onPrimary = postgres(pair.primaryUrl('app'), { max: 1, onnotice: () => {} });
    await onPrimary`create extension pg_stat_statements`;
    onReplica = postgres(pair.replicaUrl('app'), { max: 1, onnotice: () => {} });
    server = await startTestServer({
      databaseUrl: pair.primaryUrl('app'),
      env: {
        DATABASE_READ_URL: pair.replicaUrl('app'),
        DB_READ_MAX_LAG: `${MAX_LAG_MS}ms`,
        DB_READ_CHECK_INTERVAL: '200ms',
        METRICS_PORT: '0',
        // Nothing in the background reads events on its own.
        TAG_MONITOR: 'off',
        EVENT_RETENTION: 'off',
        WEBHOOK_DELIVERY: 'off',
      },
    });
    console.log(
      `replica pair up in ${pair.startupMs} ms (initdb, start, pg_basebackup -R, standby streaming); with the app ${Math.round(performance.now() - started)} ms`,
    );
    const tag = await preverifiedTag(server);
    merchantId = tag.merchantId;
    tagId = tag.tagId;
    await send(40);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await onPrimary?.end({ timeout: 2 });
    await onReplica?.end({ timeout: 2 });
    await pair?.stop();
  });

  it('serves the list and the export from the replica, and nothing else; the statistics need none', async () => {
    await waitFor(async () => (await metric('partner_tags_db_replica_up')) === 1, 10_000, 'the replica in use');
    await onPrimary`select pg_stat_statements_reset()`;
    await onReplica`select pg_stat_statements_reset()`;
    const before = await reads('events_list', 'replica');
    await readEverything(sent);

    const [replicaRan, primaryRan] = [await statements(onReplica), await statements(onPrimary)];
    expect(callsOf(replicaRan, isListOrExport)).toBeGreaterThanOrEqual(3);
    expect(callsOf(primaryRan, isListOrExport)).toBe(0);
    // The replica ran the reads, the lag checks and nothing else: the statistics' merchant checks
    // ran on the primary (the API key was checked there too, then cached), their counts in ClickHouse.
    const other = replicaRan.filter((r) => !isListOrExport(r.query) && !isProbe(r.query));
    expect(other.map((r) => r.query)).toEqual([]);
    expect(callsOf(primaryRan, (q) => q.includes('from "merchants"'))).toBeGreaterThanOrEqual(3);
    // The events reached ClickHouse through the outbox, written and cleared on the primary.
    expect(callsOf(primaryRan, (q) => q.includes('delete from stats_outbox'))).toBeGreaterThan(0);
    expect((await reads('events_list', 'replica')) ?? 0).toBeGreaterThan(before ?? 0);
    await onReplica`select pg_stat_statements_reset()`;
    console.log(
      `stats summary (ClickHouse, merchant check on the primary): median ${(await summaryMs()).toFixed(1)} ms`,
    );
    const afterSummaries = await statements(onReplica);
    expect(afterSummaries.filter((r) => !isProbe(r.query)).map((r) => r.query)).toEqual([]);
  });

  it('never sends writes or read-your-writes paths to the replica', async () => {
    await onReplica`select pg_stat_statements_reset()`;
    // Writes with their own reads: a merchant, a tag, an idempotent create replayed, a session, events.
    const key = { 'Idempotency-Key': `replica-${Date.now()}` };
    const first = await api(server, server.partner.apiKey).post('/v1/partners/merchant', { name: 'Replica M' }, key);
    const again = await api(server, server.partner.apiKey).post('/v1/partners/merchant', { name: 'Replica M' }, key);
    expect(first.status).toBe(201);
    expect(again.body.merchantId).toBe(first.body.merchantId);
    expect(
      (await api(server, server.partner.apiKey).get(`/v1/partners/merchant/${first.body.merchantId}`)).status,
    ).toBe(200);
    const session = await api(server, server.partner.apiKey).post(`/v1/partners/merchant/${merchantId}/sessions`, {
      allowedOrigins: ['https://shop.example'],
    });
    expect([200, 201]).toContain(session.status);
    await send(2);
    const ran = await statements(onReplica);
    expect(ran.filter((r) => !isListOrExport(r.query) && !isProbe(r.query)).map((r) => r.query)).toEqual([]);
  });

  it('uses a paused replica until DB_READ_MAX_LAG, refusals checked on the primary, statistics up to date', async () => {
    await onReplica`select pg_wal_replay_pause()`;
    try {
      const pausedAt = Date.now();
      // A merchant created now is not on the paused replica: its 404 there is confirmed on the primary.
      const fresh = await preverifiedTag(server);
      const confirmsBefore = (await fallbacks('events_list', 'confirm')) ?? 0;
      const list = await listEvents(server, fresh.merchantId);
      expect(list.status).toBe(200);
      expect((await fallbacks('events_list', 'confirm')) ?? 0).toBe(confirmsBefore + 1);
      // The statistics do not wait on the paused replica: up to date at once.
      await send(3);
      const summary = await getStats(server, 'summary', { merchantId, ...RANGE });
      expect(summary.body.totals.events).toBe(sent);
      expect(Date.now() - pausedAt).toBeLessThan(MAX_LAG_MS);

      // Past the bound the replica is left alone: the lag shows it, reads answer from the primary.
      await waitFor(
        async () => ((await metric('partner_tags_db_replica_lag_seconds')) ?? 0) * 1000 > MAX_LAG_MS,
        10_000,
        'lag past the bound',
      );
      const lagging = (await fallbacks('events_list', 'lagging')) ?? 0;
      const page = await listEvents(server, merchantId, { limit: 1 });
      expect(page.body.pagination.total).toBe(sent);
      expect((await fallbacks('events_list', 'lagging')) ?? 0).toBe(lagging + 1);
      expect(await metric('partner_tags_db_replica_lag_bytes')).toBeGreaterThan(0);
    } finally {
      await onReplica`select pg_wal_replay_resume()`;
    }
    // Caught up again: back on the replica within a few checks.
    await waitFor(async () => ((await metric('partner_tags_db_replica_lag_seconds')) ?? 99) < 1, 10_000, 'caught up');
    const before = (await reads('events_list', 'replica')) ?? 0;
    await readEverything(sent);
    expect((await reads('events_list', 'replica')) ?? 0).toBe(before + 1);
  });

  it('keeps the replica in use while every pooled connection to it is busy', async () => {
    const downBefore = (await fallbacks('events_list', 'down')) ?? 0;
    // Twice the pool's connections in 1.5 s reads: every replica connection busy for about 3 s, 15
    // lag checks meanwhile. On the pool, a check queued past its 1 s deadline counted the replica down.
    const busy = Array.from({ length: 2 * server.app.deps.env.DB_POOL_MAX }, () =>
      server.app.deps.reads.run('events_list', (db) => db.execute(sql`select pg_sleep(1.5)`)),
    );
    const seen: (number | undefined)[] = [];
    const sampling = (async () => {
      for (let i = 0; i < 25; i++) {
        seen.push(await metric('partner_tags_db_replica_up'));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await Promise.all([...busy, sampling]);
    expect(seen.every((up) => up === 1)).toBe(true);
    expect((await fallbacks('events_list', 'down')) ?? 0).toBe(downBefore);
  }, 30_000);

  it('answers every read from the primary while the replica is stopped, and returns to it', async () => {
    pair.stopReplica('immediate');
    const down = async () =>
      ((await fallbacks('events_list', 'down')) ?? 0) + ((await fallbacks('events_list', 'error')) ?? 0);
    const fellBack = await down();
    // At once (a read failing on the replica runs again on the primary) and once the check saw it.
    await readEverything(sent);
    await waitFor(async () => (await metric('partner_tags_db_replica_up')) === 0, 5_000, 'the replica seen down');
    await readEverything(sent);
    expect(await down()).toBeGreaterThanOrEqual(fellBack + 2);
    expect(Number.isNaN(await metric('partner_tags_db_replica_lag_seconds'))).toBe(true);
    console.log(`stats summary with the replica down: median ${(await summaryMs()).toFixed(1)} ms`);

    pair.startReplica();
    await waitFor(async () => (await metric('partner_tags_db_replica_up')) === 1, 20_000, 'the replica back');
    const before = (await reads('events_list', 'replica')) ?? 0;
    await readEverything(sent);
    expect((await reads('events_list', 'replica')) ?? 0).toBeGreaterThan(before);
  }, 60_000);

  it('exposes the lag on /metrics, small while the replica keeps up', async () => {
    const address = server.app.metricsServer?.address() as AddressInfo;
    const text = await (await fetch(`http://127.0.0.1:${address.port}/metrics`)).text();
    const value = (name: string) => Number(/\n(\S+) (\S+)/.exec(text.slice(text.indexOf(`\n${name} `)))?.[2]);
    expect(value('partner_tags_db_replica_up')).toBe(1);
    expect(value('partner_tags_db_replica_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(value('partner_tags_db_replica_lag_seconds')).toBeLessThan(1);
    expect(value('partner_tags_db_replica_lag_bytes')).toBeGreaterThanOrEqual(0);
    expect(text).toContain('partner_tags_db_replica_fallbacks_total{route="events_list",reason="down"}');
  });
});
