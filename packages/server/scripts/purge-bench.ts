/**
 * `pnpm tsx scripts/purge-bench.ts`: the purge of a deleted merchant with PURGE_BENCH_EVENTS events
 * (default 1,000,000) on PostgreSQL, and `/v1/collect` latency of another merchant meanwhile against
 * the same load before the DELETE. A scratch database on 127.0.0.1:5432 (dropped at the end), the
 * app in this process on loopback. Prints JSON: load time, purge time (DELETE -> merchant.deleted,
 * and claim -> merchant.deleted), p50/p99/max of collect before the DELETE and while the purge runs
 * (from its claim to merchant.deleted).
 */
import { sql } from 'drizzle-orm';
import { rowsOf } from '../src/db/read-rows.js';
import { startTestServer } from '../src/testing/index.js';
import { createScratchDatabase } from '../src/testing/services.js';
import { merchantWithTag, partnerCall, startCollectLoad } from './lib/collect-load.js';

const EVENTS = Number(process.env.PURGE_BENCH_EVENTS ?? 1_000_000);
const SENDERS = Number(process.env.PURGE_BENCH_SENDERS ?? 8);
const PER_REQUEST = 10;

const scratch = await createScratchDatabase('bench_purge');
const server = await startTestServer({ databaseUrl: scratch.url, env: { LOG_LEVEL: 'warn' } });
const db = server.app.deps.db;
const post = partnerCall(server);

try {
  const doomed = await merchantWithTag(server, 'Doomed');
  const live = await merchantWithTag(server, 'Live');

  // The doomed merchant's events straight into the tables (the bench measures the purge, not ingestion):
  // events with their seq and their day counts by trigger.
  const loadStarted = performance.now();
  const chunk = 20_000;
  for (let from = 1; from <= EVENTS; from += chunk) {
    const to = Math.min(EVENTS, from + chunk - 1);
    await db.execute(sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
      select ${doomed.merchantId}::uuid, 'e' || g, ${doomed.tagId}::uuid, 'm' || (g % 20000),
        (array['PageView','AddToCart','Purchase','Lead'])[1 + g % 4],
        now() - make_interval(secs => g), '{"url":"https://shop.example/p' || (g % 50) || '"}', g
      from generate_series(${from}::int, ${to}::int) g`);
  }
  await db.execute(sql`analyze events`);
  const loadSeconds = (performance.now() - loadStarted) / 1000;

  // Collect for the live merchant: SENDERS loops of 10-event requests, latencies per phase.
  const load = startCollectLoad<'before' | 'grace' | 'purging'>(server, live.tagId, {
    first: 'before',
    senders: SENDERS,
    perRequest: PER_REQUEST,
  });
  await new Promise((resolve) => setTimeout(resolve, 20_000));

  load.setPhase('grace');
  const deleted = await post(`/v1/partners/merchant/${doomed.merchantId}`, undefined, 'DELETE');
  if (deleted.status !== 202) throw new Error(`DELETE: ${deleted.status}`);
  const deletedAt = performance.now();
  let claimedAt: number | undefined;
  for (;;) {
    const [claim] = rowsOf(
      await db.execute(sql`select purge_claimed_until from merchants where id = ${doomed.merchantId}::uuid`),
    );
    if (claim?.purge_claimed_until && claimedAt === undefined) {
      claimedAt = performance.now();
      load.setPhase('purging');
    }
    const [done] = rowsOf(
      await db.execute(sql`select 1 from webhook_messages where type = 'merchant.deleted'
        and data->>'merchantId' = ${doomed.merchantId}`),
    );
    if (done) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const purgedAt = performance.now();
  await load.stop();
  const [left] = rowsOf<{ n: number }>(
    await db.execute(sql`select count(*)::int as n from events where merchant_id = ${doomed.merchantId}::uuid`),
  );

  process.stdout.write(
    `${JSON.stringify(
      {
        events: EVENTS,
        loadSeconds: Number(loadSeconds.toFixed(1)),
        purge: {
          deleteToWebhookSeconds: Number(((purgedAt - deletedAt) / 1000).toFixed(1)),
          claimToWebhookSeconds: claimedAt ? Number(((purgedAt - claimedAt) / 1000).toFixed(1)) : null,
          eventsLeft: left?.n,
        },
        collect: {
          senders: SENDERS,
          eventsPerRequest: PER_REQUEST,
          before: load.summary('before'),
          purging: load.summary('purging'),
          errors: load.errors,
        },
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await server.close();
  await scratch.drop();
}
