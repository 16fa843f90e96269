/**
 * `npx tsx scripts/retention-bench.ts`: one retention pass over a merchant with RETENTION_BENCH_EVENTS
 * events (default 10,000,000) spread over 365 days, of which those older than 30 days (~92%) go, on
 * PostgreSQL; and `/v1/collect` latency of another merchant during the pass against the same load
 * before it (the approach of scripts/purge-bench.ts). A scratch database on 127.0.0.1:5432 (dropped
 * at the end), the app in this process on loopback with its own retention job. Prints JSON: load
 * time, the pass (claim -> done, rows/s), what is left, p50/p99/max of collect before and during.
 */
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/db/read-rows.js';
import { startTestServer } from '../src/testing/index.js';
import { createScratchDatabase } from '../src/testing/services.js';
import { merchantWithTag, partnerCall, startCollectLoad } from './lib/collect-load.js';

const EVENTS = Number(process.env.RETENTION_BENCH_EVENTS ?? 10_000_000);
const SENDERS = Number(process.env.RETENTION_BENCH_SENDERS ?? 8);
const SPAN_DAYS = 365;
const KEEP_DAYS = 30;
const PER_REQUEST = 10;

const scratch = await createScratchDatabase('bench_retention');
const server = await startTestServer({
  databaseUrl: scratch.url,
  // A long statement deadline for the load's big statements (the pass's are short either way).
  env: { LOG_LEVEL: 'warn', EVENT_RETENTION: 'on', EVENT_RETENTION_INTERVAL: '2s', DB_STATEMENT_TIMEOUT: '600000' },
});
const db = server.app.deps.db;
const call = partnerCall(server);
const one = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await db.execute(query))[0];

/**
 * The old merchant's events straight into the tables, triggers off (session_replication_role: the
 * load measures nothing), their day counts after. (The statistics' part of a pass is one ClickHouse
 * DELETE: not what this measures.)
 */
async function load(merchantId: string, tagId: string): Promise<void> {
  const chunk = 50_000;
  for (let from = 1; from <= EVENTS; from += chunk) {
    const to = Math.min(EVENTS, from + chunk - 1);
    await db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      await tx.execute(sql`
        insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
        select ${merchantId}::uuid, 'e' || g, ${tagId}::uuid, 'm' || (g % 20000),
          (array['PageView','AddToCart','Purchase','Lead'])[1 + g % 4],
          now() - make_interval(secs => g::float8 * ${(SPAN_DAYS * 86_400) / EVENTS}),
          '{"url":"https://shop.example/p' || (g % 20) || '"}', g
        from generate_series(${from}::int, ${to}::int) g`);
    });
  }
  await db.transaction(async (tx) => {
    await tx.execute(sql`
      insert into event_day_counts (merchant_id, day, event_name, n)
      select merchant_id, (event_time at time zone 'UTC')::date, event_name, count(*)
      from events where merchant_id = ${merchantId}::uuid group by 1, 2, 3`);
  });
  await db.execute(sql`vacuum analyze events`);
}

try {
  const old = await merchantWithTag(server, 'Old');
  const live = await merchantWithTag(server, 'Live');
  const loadStarted = performance.now();
  process.stderr.write(`loading ${EVENTS} events\n`);
  await load(old.merchantId, old.tagId);
  process.stderr.write(`loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s\n`);
  const loadSeconds = (performance.now() - loadStarted) / 1000;

  // Collect for the live merchant: SENDERS loops of 10-event requests, latencies per phase.
  const collect = startCollectLoad<'before' | 'waiting' | 'passing'>(server, live.tagId, {
    first: 'before',
    senders: SENDERS,
    perRequest: PER_REQUEST,
  });
  await new Promise((resolve) => setTimeout(resolve, 20_000));

  collect.setPhase('waiting');
  const set = await call(`/v1/partners/merchant/${old.merchantId}`, { retentionDays: KEEP_DAYS }, 'PATCH');
  if (set.status !== 200) throw new Error(`PATCH: ${set.status}`);
  let claimedAt: number | undefined;
  const deadline = performance.now() + 3_600_000;
  for (;;) {
    const row = await one<{ claimed: string | null; checked: string | null }>(
      sql`select retention_claimed_until::text as claimed, retention_checked_at::text as checked
        from merchants where id = ${old.merchantId}::uuid`,
    );
    if (row?.claimed && claimedAt === undefined) {
      claimedAt = performance.now();
      collect.setPhase('passing');
    }
    if (row?.checked) break;
    if (performance.now() > deadline) throw new Error('no pass within an hour');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const doneAt = performance.now();
  process.stderr.write(`pass done in ${claimedAt ? ((doneAt - claimedAt) / 1000).toFixed(1) : '?'} s\n`);
  await collect.stop();
  const left = await one<{ n: number; oldest: string }>(
    sql`select count(*)::int as n, min(event_time)::text as oldest from events where merchant_id = ${old.merchantId}::uuid`,
  );
  const removed = EVENTS - (left?.n ?? 0);
  const passSeconds = claimedAt ? (doneAt - claimedAt) / 1000 : Number.NaN;

  process.stdout.write(
    `${JSON.stringify(
      {
        events: EVENTS,
        keepDays: KEEP_DAYS,
        loadSeconds: Number(loadSeconds.toFixed(1)),
        pass: {
          claimToDoneSeconds: Number(passSeconds.toFixed(1)),
          eventsRemoved: removed,
          rowsPerSecond: Math.round(removed / passSeconds),
          eventsLeft: left?.n,
          oldestLeft: left?.oldest,
        },
        collect: {
          senders: SENDERS,
          eventsPerRequest: PER_REQUEST,
          before: collect.summary('before'),
          passing: collect.summary('passing'),
          errors: collect.errors,
        },
        loadAverage: (await import('node:os')).loadavg().map((x) => Number(x.toFixed(2))),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await server.close();
  await scratch.drop();
}
