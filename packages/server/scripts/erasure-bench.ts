/**
 * `pnpm tsx scripts/erasure-bench.ts`: the erasure of one visitor among ERASURE_BENCH_EVENTS events
 * (default 10,000,000) over ERASURE_BENCH_MERCHANTS merchants (100) of one partner, each merchant's
 * events shared by ERASURE_BENCH_VISITORS visitor ids (2,000; the same ids in every merchant, so a
 * partner-wide erasure finds the visitor in all of them), spread over 7 days, on PostgreSQL. A scratch database
 * on 127.0.0.1:5432 (dropped at the end), the app in this process with its own erasure job. Prints
 * JSON: load time, then per erasure (one merchant, then partner-wide) the visitor's events, the
 * 15-minute buckets recounted, POST -> completed and the job's own time (completed minus the grace
 * after creation), and the plan of `GET /v1/partners/events?muid=` (EXPLAIN ANALYZE).
 */
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { rowsOf } from '../src/db/read-rows.js';
import { planEventList } from '../src/features/events/read/list-events.js';
import { startTestServer } from '../src/testing/index.js';
import { createScratchDatabase } from '../src/testing/services.js';

const EVENTS = Number(process.env.ERASURE_BENCH_EVENTS ?? 10_000_000);
const MERCHANTS = Number(process.env.ERASURE_BENCH_MERCHANTS ?? 100);
const VISITORS = Number(process.env.ERASURE_BENCH_VISITORS ?? 2_000);
const STATEMENT_TIMEOUT_MS = 1000;
const GRACE_MS = STATEMENT_TIMEOUT_MS + 500;

const scratch = await createScratchDatabase('bench_erasure');
const server = await startTestServer({
  databaseUrl: scratch.url,
  env: { LOG_LEVEL: 'warn', DB_STATEMENT_TIMEOUT: String(STATEMENT_TIMEOUT_MS), DB_LONG_STATEMENT_TIMEOUT: '600000' },
});
const db = server.app.deps.db;
const call = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.partner.apiKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
const one = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await db.execute(query))[0] as T;

try {
  const merchants = rowsOf<{ id: string }>(
    await db.execute(sql`
      insert into merchants (partner_id, name)
      select ${server.partner.partnerId}::uuid, 'Shop ' || g from generate_series(1, ${MERCHANTS}::int) g
      returning id::text as id`),
  ).map((row) => row.id);
  const tag = await call('POST', '/v1/partners/tag/generate', {
    merchantId: merchants[0],
    domain: server.partner.domain,
  });

  // Events straight into the table (the bench measures the erasure, not ingestion) over a client of
  // its own (no statement deadline), triggers off (day counts and NOTIFY are not what is measured):
  // merchant after merchant (sequential index inserts), event k of a merchant has seq k + 1, visitor
  // `v` || k % V, and one event every 7 days / (EVENTS / M).
  const loadStarted = performance.now();
  const loader = postgres(scratch.url, { max: 1, onnotice: () => {} });
  try {
    await loader`create table bench_merchants as select (row_number() over (order by id) - 1)::int as i, id
      from merchants where partner_id = ${server.partner.partnerId}::uuid`;
    await loader`alter table events disable trigger user`;
    const chunk = 250_000;
    const perMerchant = Math.ceil(EVENTS / MERCHANTS);
    for (let from = 0; from < EVENTS; from += chunk) {
      const to = Math.min(EVENTS, from + chunk) - 1;
      await loader`
        insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
        select m.id, 'e' || g, ${tag.body.tagId as string}::uuid, 'v' || ((g % ${perMerchant}::int) % ${VISITORS}::int),
          (array['PageView','AddToCart','Purchase','PageView'])[1 + g % 4],
          timestamptz '2026-11-01 00:00:00+00' + make_interval(secs => (g % ${perMerchant}::int) * (7 * 86400.0 / ${perMerchant}::int)),
          case when g % 4 = 2 then '{"value":10,"currency":"EUR"}' else '{"path":"/p' || (g % 50) || '"}' end,
          g % ${perMerchant}::int + 1
        from generate_series(${from}::int, ${to}::int) g
        join bench_merchants m on m.i = g / ${perMerchant}::int`;
    }
    await loader`alter table events enable trigger user`;
    await loader`drop table bench_merchants`;
    await loader`vacuum analyze events`;
  } finally {
    await loader.end({ timeout: 5 });
  }
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  console.error(JSON.stringify({ loaded: EVENTS, loadSeconds }));

  const erase = async (muid: string, merchantId?: string) => {
    const scope = merchantId
      ? sql`merchant_id = ${merchantId}::uuid`
      : sql`merchant_id in (select id from merchants where partner_id = ${server.partner.partnerId}::uuid)`;
    const facts = await one<{ events: number; buckets: number }>(sql`
      select count(*)::int as events,
        count(distinct (merchant_id, date_bin('15 minutes', event_time, timestamptz '1970-01-01 00:00:00+00')))::int as buckets
      from events where muid = ${muid} and ${scope}`);
    const started = performance.now();
    const created = await call('POST', '/v1/partners/erasures', { muid, ...(merchantId ? { merchantId } : {}) });
    if (created.status !== 202) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    let state = created.body;
    while (state.status !== 'completed') {
      if (performance.now() - started > 30 * 60_000) throw new Error('erasure not completed in 30 min');
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = (await call('GET', `/v1/partners/erasures/${created.body.id as string}`)).body;
    }
    const endToEndSeconds = (performance.now() - started) / 1000;
    const jobSeconds =
      (Date.parse(state.completedAt as string) - Date.parse(state.createdAt as string) - GRACE_MS) / 1000;
    return {
      scope: merchantId ? 'merchant' : 'partner',
      muid,
      ...facts,
      eventsDeleted: state.eventsDeleted,
      endToEndSeconds,
      jobSeconds,
    };
  };

  const one42 = await one<{ merchantId: string }>(
    sql`select merchant_id::text as "merchantId" from events where muid = 'v42' limit 1`,
  );
  const results = [];
  for (const [muid, merchantId] of [
    ['v42', one42.merchantId],
    ['v43', undefined],
  ] as const) {
    results.push(await erase(muid, merchantId));
    console.error(JSON.stringify(results.at(-1)));
  }

  // The muid= filter's plan on the list's first page.
  const plan = planEventList(
    server.partner.partnerId,
    { merchantId: merchants[1]!, muid: 'v101', page: 1, limit: 12, sortBy: 'event_time', sortOrder: 'desc' },
    server.app.deps.cursorKey,
  );
  const explain = (query: ReturnType<typeof sql>) =>
    db
      .execute(sql`explain (analyze, costs off, timing on) ${query}`)
      .then((r) => rowsOf<{ 'QUERY PLAN': string }>(r).map((row) => row['QUERY PLAN']));
  const listPlan = await explain(plan.data);
  const countPlan = await explain(plan.count);
  console.log(
    JSON.stringify(
      { events: EVENTS, merchants: MERCHANTS, visitors: VISITORS, loadSeconds, results, listPlan, countPlan },
      null,
      2,
    ),
  );
} finally {
  await server.close();
  await scratch.drop();
}
