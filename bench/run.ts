/**
 * `pnpm bench`: the event list, the merchant list and ingestion against their baselines, on real
 * PostgreSQL. See README.md for what each figure means. Flags: --quick, --events N, --keep,
 * --out DIR, --reps N, --duration S, --ingest N, --merchants N.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { openDatabase } from '../packages/server/src/db/client.js';
import { eventListQueries, type ListEventsParams } from '../packages/server/src/services/events/list-events.js';
import { onboardPartner } from '../packages/server/src/services/partner/onboard-partner.js';
import { type Child, startChild } from './lib/children.js';
import { closeAgent, request, requestJson } from './lib/http.js';
import { type SeedMerchant, seedEvents, windowEnd } from './lib/seed.js';
import { int, type Latency, latency, ms, quantile, ratio, since } from './lib/stats.js';
import { measureSustained, type SustainedResult } from './lib/sustained.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const SERVER_DIR = path.resolve(BENCH_DIR, '../packages/server');
const DAY_MS = 86_400_000;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    events: { type: 'string' },
    merchants: { type: 'string' },
    keep: { type: 'boolean', default: false },
    out: { type: 'string' },
    reps: { type: 'string' },
    duration: { type: 'string' },
    ingest: { type: 'string' },
  },
  allowPositionals: true,
});

const quick = flags.quick ?? false;
const merchantCount = Number(flags.merchants ?? 10);
const largeEvents = Number(flags.events ?? (quick ? 300_000 : 10_000_000));
const smallEvents = Math.min(100_000, Math.max(merchantCount, Math.floor(largeEvents / 10)));
const reps = Number(flags.reps ?? (quick ? 60 : 200));
const durationSeconds = Number(flags.duration ?? (quick ? 3 : 10));
const ingestEvents = Number(flags.ingest ?? (quick ? 20_000 : 100_000));
const outDir = path.resolve(flags.out ?? path.join(BENCH_DIR, 'results'));
const poolMax = Number(process.env.DB_POOL_MAX ?? 2 * os.availableParallelism() + 2);
for (const [name, value] of Object.entries({ merchantCount, largeEvents, reps, durationSeconds, ingestEvents })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: must be a positive integer`);
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '_');

interface Shape {
  key: string;
  label: string;
  deep: boolean;
  params: (merchantId: string) => ListEventsParams;
}

const ymd = (instant: number) => new Date(instant).toISOString().slice(0, 10);
const base = (merchantId: string): ListEventsParams => ({
  merchantId,
  page: 1,
  limit: 100,
  sortOrder: 'desc',
  sortBy: 'event_time',
});
const SHAPES: Shape[] = [
  { key: 'page1', label: 'page 1, limit 100, default sort', deep: false, params: base },
  {
    key: 'names30d',
    label: 'PageView,Purchase + 30-day range',
    deep: false,
    params: (id) => ({
      ...base(id),
      events: 'PageView,Purchase',
      startDate: ymd(windowEnd() - 30 * DAY_MS),
      endDate: ymd(windowEnd() - DAY_MS),
    }),
  },
  { key: 'byName', label: 'sortBy=event_name', deep: false, params: (id) => ({ ...base(id), sortBy: 'event_name' }) },
  { key: 'page1000', label: 'page 1000, limit 100', deep: true, params: (id) => ({ ...base(id), page: 1000 }) },
];

function queryString(params: ListEventsParams): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  return search.toString();
}

interface ShapeResult {
  key: string;
  label: string;
  api: Latency;
  raw: Latency;
  /** `GET /healthz` timed alongside: the HTTP round trip no API can avoid. */
  http: Latency;
  ratio: number;
  totalItems: number;
  rows: number;
}

async function main(): Promise<void> {
  const adminUrl = 'postgres://postgres@127.0.0.1:5432/postgres';
  const givenUrl = process.env.BENCH_DATABASE_URL;
  const dbName = `bench_${stamp.toLowerCase()}`;
  const url = givenUrl ?? `postgres://postgres@127.0.0.1:5432/${dbName}`;
  const admin = givenUrl ? null : postgres(adminUrl, { max: 1, onnotice: () => {} });
  if (admin) await admin.unsafe(`create database ${dbName}`);
  log(
    `bench: database ${givenUrl ? url : dbName}, ${merchantCount} merchants, ${int(smallEvents)} then ${int(largeEvents)} events, pool ${poolMax}`,
  );

  const children: Child[] = [];
  const raw = postgres(url, { max: poolMax, onnotice: () => {} });
  const seedSql = postgres(url, { max: 1, onnotice: () => {} });
  const results: Record<string, unknown> = {
    startedAt: new Date().toISOString(),
    machine: { cpus: os.availableParallelism(), memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    settings: { merchantCount, smallEvents, largeEvents, reps, durationSeconds, ingestEvents, poolMax, quick },
  };
  try {
    // Schema (the server's migrations) and one partner.
    const handle = await openDatabase({ kind: 'postgres', url, maxConnections: 2 });
    const partner = await onboardPartner(
      handle.db,
      { name: 'Bench Partner', domain: `bench-${stamp.slice(-6)}.partner-bench.com` },
      'tags.partner-tags.example',
    );
    await handle.close();
    const pgVersion = (await raw`select current_setting('server_version') as v`)[0]?.v as string;
    (results.machine as Record<string, unknown>).postgres = pgVersion;

    const api = await startChild({
      name: 'API server',
      cwd: SERVER_DIR,
      script: 'src/main.ts',
      readyPath: '/healthz',
      env: {
        DATABASE_URL: url,
        NODE_ENV: 'production',
        LOG_LEVEL: 'error',
        DB_POOL_MAX: String(poolMax),
        RATE_LIMIT_PER_MINUTE: '0',
        COLLECT_RATE_LIMIT_PER_MINUTE: '0',
      },
    });
    children.push(api);
    const auth = { authorization: `Bearer ${partner.apiKey}` };

    const merchants: SeedMerchant[] = [];
    for (let i = 0; i < merchantCount + 1; i++) {
      const created = await requestJson<{ merchantId: string }>(`${api.url}/v1/partners/merchant`, {
        method: 'POST',
        headers: auth,
        body: { name: `Bench merchant ${i}` },
        expect: 201,
      });
      const res = await request(`${api.url}/v1/partners/tag/generate`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ merchantId: created.merchantId, domain: partner.domain }),
      });
      if (res.status >= 300) throw new Error(`tag/generate: ${res.status} ${res.body}`);
      merchants.push({ merchantId: created.merchantId, tagId: (JSON.parse(res.body) as { tagId: string }).tagId });
    }
    // The last merchant takes the ingestion runs; the others hold the seeded events.
    const ingestMerchant = merchants.pop() as SeedMerchant;

    const analyze = async () => {
      const start = process.hrtime.bigint();
      await seedSql`vacuum (analyze) events`;
      await seedSql`vacuum (analyze) event_day_counts`;
      return since(start) / 1000;
    };

    const plans: Record<string, string> = {};
    const measureShapes = async (scale: string): Promise<ShapeResult[]> => {
      const out: ShapeResult[] = [];
      for (const shape of SHAPES) {
        const apiSamples: number[] = [];
        const rawSamples: number[] = [];
        const httpSamples: number[] = [];
        let totalItems = 0;
        let rows = 0;
        const warmup = Math.max(3, Math.floor(reps / 10));
        for (let i = 0; i < reps + warmup; i++) {
          const merchant = merchants[i % merchants.length] as SeedMerchant;
          const params = shape.params(merchant.merchantId);
          const queries = eventListQueries(partner.partnerId, params);
          // API and raw alternate, so load from elsewhere on the machine hits both alike.
          let start = process.hrtime.bigint();
          const res = await request(`${api.url}/v1/partners/events?${queryString(params)}`, { headers: auth });
          const apiMs = since(start);
          if (res.status !== 200) throw new Error(`events ${shape.key}: ${res.status} ${res.body}`);
          start = process.hrtime.bigint();
          // Prepared, as postgres.js tagged templates are and as the server sends them
          // (`unsafe` alone would parse and plan each time: a weaker baseline).
          const [data, count] = await Promise.all([
            raw.unsafe(queries.data.sql, queries.data.params as never[], { prepare: true }),
            raw.unsafe(queries.count.sql, queries.count.params as never[], { prepare: true }),
          ]);
          const rawMs = since(start);
          start = process.hrtime.bigint();
          await request(`${api.url}/healthz`);
          const httpMs = since(start);
          if (i >= warmup) {
            apiSamples.push(apiMs);
            rawSamples.push(rawMs);
            httpSamples.push(httpMs);
          }
          const body = JSON.parse(res.body) as { events: unknown[]; pagination: { totalItems: number } };
          if (body.events.length !== data.length || body.pagination.totalItems !== Number(count[0]?.total)) {
            throw new Error(`events ${shape.key}: the API and the raw SQL disagree`);
          }
          totalItems = body.pagination.totalItems;
          rows = body.events.length;
        }
        const a = latency(apiSamples);
        const r = latency(rawSamples);
        const h = latency(httpSamples);
        out.push({
          key: shape.key,
          label: shape.label,
          api: a,
          raw: r,
          http: h,
          ratio: a.p50 / r.p50,
          totalItems,
          rows,
        });
        const queries = eventListQueries(partner.partnerId, shape.params((merchants[0] as SeedMerchant).merchantId));
        const explain = async (q: { sql: string; params: unknown[] }) =>
          (await raw.unsafe(`explain (analyze, buffers, costs off) ${q.sql}`, q.params as never[]))
            .map((row) => row['QUERY PLAN'])
            .join('\n');
        plans[`${scale} ${shape.key} data`] = await explain(queries.data);
        plans[`${scale} ${shape.key} count`] = await explain(queries.count);
        log(`  ${scale} ${shape.label}: API p50 ${ms(a.p50)}, raw p50 ${ms(r.p50)} (${ratio(a.p50 / r.p50)})`);
      }
      return out;
    };

    // 1-2. The event list at the small scale, then grown to the large one.
    const perSmall = Math.floor(smallEvents / merchants.length);
    const seedSmall = await seedEvents(seedSql, merchants, perSmall, 'seed (small)');
    const vacuumSmall = await analyze();
    log(
      `bench: seeded ${int(seedSmall.events)} events in ${seedSmall.seconds.toFixed(1)} s, vacuum ${vacuumSmall.toFixed(1)} s`,
    );
    const small = await measureShapes('small');
    const perLarge = Math.floor(largeEvents / merchants.length) - perSmall;
    const seedLarge = await seedEvents(seedSql, merchants, perLarge, 'seed (large)');
    const vacuumLarge = await analyze();
    log(
      `bench: seeded ${int(seedLarge.events)} more events in ${seedLarge.seconds.toFixed(1)} s, vacuum ${vacuumLarge.toFixed(1)} s`,
    );
    const large = await measureShapes('large');
    const eventsAtSmall = perSmall * merchants.length;
    const eventsAtLarge = (perSmall + perLarge) * merchants.length;
    results.seeding = {
      small: { ...seedSmall, vacuumSeconds: vacuumSmall },
      large: { ...seedLarge, vacuumSeconds: vacuumLarge },
    };
    // The fixed part of every API request, for reading the ratios: an HTTP round trip to the
    // server (`/healthz`) and the key lookup every partner request makes before its own queries.
    const keyHash = createHash('sha256').update(partner.apiKey).digest('hex');
    const floorHttp: number[] = [];
    const floorKey: number[] = [];
    for (let i = 0; i < reps; i++) {
      let start = process.hrtime.bigint();
      await request(`${api.url}/healthz`);
      floorHttp.push(since(start));
      start = process.hrtime.bigint();
      await raw`select p.id from api_keys k join partners p on p.id = k.partner_id
        where k.key_hash = ${keyHash} and k.revoked_at is null and (k.expires_at is null or k.expires_at > now()) limit 1`;
      floorKey.push(since(start));
    }
    const floor = { httpRoundTrip: latency(floorHttp), keyLookup: latency(floorKey) };
    results.eventList = { eventsAtSmall, eventsAtLarge, small, large, plans, floor };

    // 3. Merchant-list throughput: the API against a bare node:http server with the same queries.
    const bare = await startChild({
      name: 'bare server',
      cwd: BENCH_DIR,
      script: 'bare-server.ts',
      readyPath: '/healthz',
      env: { DATABASE_URL: url, PARTNER_ID: partner.partnerId, DB_POOL_MAX: String(poolMax) },
    });
    children.push(bare);
    const cannon = async (target: string, headers: Record<string, string>) => {
      const result = await autocannon({
        url: `${target}/v1/partners/merchant?page=1&limit=10`,
        connections: 64,
        duration: durationSeconds,
        headers,
      });
      if (result.non2xx > 0 || result.errors > 0) {
        throw new Error(`merchant list at ${target}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      }
      return {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        total: result.requests.total,
      };
    };
    // Warm both, then alternate two rounds each so background load hits both alike.
    await cannon(api.url, auth);
    await cannon(bare.url, {});
    const apiRounds = [];
    const bareRounds = [];
    for (let round = 0; round < 2; round++) {
      apiRounds.push(await cannon(api.url, auth));
      bareRounds.push(await cannon(bare.url, {}));
    }
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const merchantList = {
      apiRps: mean(apiRounds.map((r) => r.rps)),
      bareRps: mean(bareRounds.map((r) => r.rps)),
      apiP50: mean(apiRounds.map((r) => r.p50)),
      bareP50: mean(bareRounds.map((r) => r.p50)),
      apiRoundsRps: apiRounds.map((r) => r.rps),
      bareRoundsRps: bareRounds.map((r) => r.rps),
      ratio: 0,
    };
    merchantList.ratio = merchantList.apiRps / merchantList.bareRps;
    results.merchantList = merchantList;
    log(`  merchant list: API ${int(merchantList.apiRps)} req/s, bare ${int(merchantList.bareRps)} req/s`);
    await bare.stop();

    // 4. Ingestion: the collector against raw batched inserts, and the day-count trigger's cost.
    results.ingestion = await measureIngestion(api.url, raw, ingestMerchant);

    // 5. The driver under sustained load (more callers than pooled connections).
    results.sustained = await measureSustained(raw, {
      callers: 64,
      windows: 4,
      windowSeconds: quick ? 1 : durationSeconds / 2,
    });
    const sustained = results.sustained as SustainedResult;
    log(`  driver under sustained load: ${sustained.windows.map(int).join(', ')} queries/s`);

    const report = markdown(results);
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, `bench-${stamp}.md`), report);
    fs.writeFileSync(path.join(outDir, `bench-${stamp}.json`), `${JSON.stringify(results, null, 2)}\n`);
    fs.writeFileSync(path.join(outDir, 'latest.md'), report);
    process.stdout.write(report);
    log(`bench: wrote ${path.join(outDir, `bench-${stamp}.md`)} and .json`);
  } finally {
    for (const child of children) await child.stop().catch(() => {});
    closeAgent();
    await raw.end({ timeout: 5 });
    await seedSql.end({ timeout: 5 });
    if (admin) {
      if (flags.keep) log(`bench: kept database ${dbName}`);
      else await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end({ timeout: 5 });
    }
  }
}

interface IngestionResult {
  events: number;
  batch: number;
  concurrency: number;
  collectorPerSecond: number;
  rawPerSecond: number;
  rawWithoutDayCountsPerSecond: number;
  ratio: number;
  triggerCost: number;
  /** The day-count trigger's time over the whole statement's, from EXPLAIN ANALYZE. */
  triggerShare: number;
  triggerMsPerStatement: number;
  error?: string;
}

async function measureIngestion(apiUrl: string, raw: postgres.Sql, merchant: SeedMerchant): Promise<IngestionResult> {
  const batch = 500;
  const concurrency = 4;
  const batches = Math.max(1, Math.ceil(ingestEvents / batch));
  const now = Date.now();
  const makeBatch = (prefix: string, b: number) =>
    Array.from({ length: batch }, (_, i) => ({
      id: `${prefix}-${b}-${i}`,
      event_name: i % 10 === 0 ? 'Purchase' : 'PageView',
      event_time: new Date(now - ((b * batch + i) % 86_400) * 1000).toISOString(),
      muid: `u${i % 97}`,
      data: { path: `/p/${i}`, value: i },
    }));
  const run = async (send: (b: number) => Promise<void>) => {
    let next = 0;
    const start = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let b = next++; b < batches; b = next++) await send(b);
      }),
    );
    return since(start) / 1000;
  };
  const stored = async (prefix: string) =>
    Number(
      (
        await raw`select count(*)::int as n from events where merchant_id = ${merchant.merchantId} and id like ${`${prefix}-%`}`
      )[0]?.n,
    );
  const insertRaw = (prefix: string) => async (b: number) => {
    const rows = makeBatch(prefix, b);
    await raw`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select ${merchant.merchantId}::uuid, id, ${merchant.tagId}::uuid, muid, event_name, event_time, raw_data
      from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.muid)}::text[],
        ${rows.map((r) => r.event_name)}::text[], ${rows.map((r) => r.event_time)}::timestamptz[],
        ${rows.map((r) => JSON.stringify(r.data))}::text[]) as t(id, muid, event_name, event_time, raw_data)
      on conflict do nothing`;
  };
  const total = batches * batch;
  const result: IngestionResult = {
    events: total,
    batch,
    concurrency,
    collectorPerSecond: Number.NaN,
    rawPerSecond: Number.NaN,
    rawWithoutDayCountsPerSecond: Number.NaN,
    ratio: Number.NaN,
    triggerCost: Number.NaN,
    triggerShare: Number.NaN,
    triggerMsPerStatement: Number.NaN,
  };
  // Raw inserts with and without the day-count trigger, three alternating rounds each (the
  // median of each): on a shared machine one round of each says little.
  const withTrigger: number[] = [];
  const withoutTrigger: number[] = [];
  for (let round = 0; round < 3; round++) {
    withTrigger.push(total / (await run(insertRaw(`raw${round}`))));
    await raw`alter table events disable trigger events_day_counts_insert`;
    try {
      withoutTrigger.push(total / (await run(insertRaw(`bare${round}`))));
    } finally {
      await raw`alter table events enable trigger events_day_counts_insert`;
    }
  }
  result.rawPerSecond = quantile(withTrigger, 0.5);
  result.rawWithoutDayCountsPerSecond = quantile(withoutTrigger, 0.5);
  // The trigger's own share of the insert's server time, from EXPLAIN ANALYZE of 500-event
  // statements (PostgreSQL times each trigger): unlike throughput, not moved by the neighbours.
  let triggerMs = 0;
  let statementMs = 0;
  for (let b = 0; b < 20; b++) {
    const rows = makeBatch('explain', b);
    const [plan] = await raw.unsafe(
      `explain (analyze, format json) insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
       select $1::uuid, id, $2::uuid, muid, event_name, event_time, raw_data
       from unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[]) as t(id, muid, event_name, event_time, raw_data)
       on conflict do nothing`,
      [
        merchant.merchantId,
        merchant.tagId,
        rows.map((r) => r.id),
        rows.map((r) => r.muid),
        rows.map((r) => r.event_name),
        rows.map((r) => r.event_time),
        rows.map((r) => JSON.stringify(r.data)),
      ] as never[],
    );
    type Explained = { 'Execution Time': number; Triggers?: Array<Record<string, unknown>> };
    const explained = ((plan?.['QUERY PLAN'] ?? []) as Explained[])[0];
    statementMs += explained?.['Execution Time'] ?? 0;
    for (const trigger of explained?.Triggers ?? []) {
      if (trigger['Trigger Name'] === 'events_day_counts_insert') triggerMs += Number(trigger.Time);
    }
  }
  result.triggerShare = triggerMs / statementMs;
  result.triggerMsPerStatement = triggerMs / 20;
  result.triggerCost = 1 - result.rawPerSecond / result.rawWithoutDayCountsPerSecond;
  try {
    const start = process.hrtime.bigint();
    await run(async (b) => {
      const res = await request(`${apiUrl}/v1/collect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tagId: merchant.tagId, events: makeBatch('api', b) }),
      });
      if (res.status >= 300) throw new Error(`collect: ${res.status} ${res.body.slice(0, 200)}`);
    });
    // Accepted is not yet stored with a queue in front: the clock stops when every event is stored.
    const deadline = Date.now() + 60_000;
    while ((await stored('api')) < total) {
      if (Date.now() > deadline) throw new Error('collect: accepted events were not all stored within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    result.collectorPerSecond = total / (since(start) / 1000);
    result.ratio = result.collectorPerSecond / result.rawPerSecond;
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`bench: ingestion through the collector failed: ${result.error}`);
  }
  return result;
}

function markdown(results: Record<string, unknown>): string {
  const settings = results.settings as Record<string, number>;
  const machine = results.machine as Record<string, unknown>;
  const list = results.eventList as {
    eventsAtSmall: number;
    eventsAtLarge: number;
    small: ShapeResult[];
    large: ShapeResult[];
    plans: Record<string, string>;
    floor: { httpRoundTrip: Latency; keyLookup: Latency };
  };
  const merchantList = results.merchantList as {
    apiRps: number;
    bareRps: number;
    apiP50: number;
    bareP50: number;
    apiRoundsRps: number[];
    bareRoundsRps: number[];
    ratio: number;
  };
  const ingestion = results.ingestion as IngestionResult;
  const sustained = results.sustained as SustainedResult;
  const mark = (ok: boolean) => (ok ? 'yes' : '**no**');
  const lines: string[] = [];
  lines.push(`# Bench ${results.startedAt as string}`, '');
  lines.push(
    `${machine.cpus as number} cores, ${machine.memoryGb as number} GB, Node ${machine.node as string}, PostgreSQL ${machine.postgres as string}; ${settings.merchantCount} merchants, 12 event names over 90 days; ${settings.reps} timed requests per shape (after warm-up), pool ${settings.poolMax}.`,
    '',
  );
  lines.push(
    `## 1. GET /v1/partners/events against the same SQL over postgres.js (${int(list.eventsAtLarge)} events)`,
    '',
  );
  lines.push(
    '| shape | rows | totalItems | API p50 | API p95 | raw p50 | raw p95 | API / raw (p50) | HTTP floor | target | met |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of list.large) {
    const target = r.key === 'page1000' ? 1.5 : 1.3;
    lines.push(
      `| ${r.label} | ${r.rows} | ${int(r.totalItems)} | ${ms(r.api.p50)} | ${ms(r.api.p95)} | ${ms(r.raw.p50)} | ${ms(r.raw.p95)} | ${ratio(r.ratio)} | ${ratio((r.raw.p50 + r.http.p50) / r.raw.p50)} | <= ${target}x | ${mark(r.ratio <= target)} |`,
    );
  }
  lines.push(
    '',
    `HTTP floor: (raw p50 + the p50 of \`GET /healthz\` timed alongside) / raw p50, the ratio of a server that spent no time at all besides the HTTP round trip and the same SQL; no HTTP API can go under it. The API sends exactly the raw statements (the access check rides in the count statement) and serves its key from the in-process cache; a key not in the cache costs one more round trip, ${ms(list.floor.keyLookup.p50)} p50 as raw SQL (HTTP round trip alone, measured after both scales: ${ms(list.floor.httpRoundTrip.p50)}).`,
  );
  lines.push('', `## 2. Growth: ${int(list.eventsAtSmall)} against ${int(list.eventsAtLarge)} events (API p50)`, '');
  lines.push(
    '| shape | API p50 small | API p50 large | large / small | raw p50 small | raw p50 large | raw large / small | target | met |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|');
  for (const big of list.large) {
    const little = list.small.find((s) => s.key === big.key) as ShapeResult;
    const growth = big.api.p50 / little.api.p50;
    const shallow = big.key !== 'page1000';
    lines.push(
      `| ${big.label} | ${ms(little.api.p50)} | ${ms(big.api.p50)} | ${ratio(growth)} | ${ms(little.raw.p50)} | ${ms(big.raw.p50)} | ${ratio(big.raw.p50 / little.raw.p50)} | ${shallow ? '<= 2x' : '(none: past the end at the small scale)'} | ${shallow ? mark(growth <= 2) : '-'} |`,
    );
  }
  lines.push(
    '',
    `## 3. GET /v1/partners/merchant throughput, 64 connections, ${settings.durationSeconds} s x 2 rounds`,
    '',
  );
  lines.push('| server | req/s | p50 latency | API / bare | target | met |', '|---|---|---|---|---|---|');
  lines.push(
    `| API | ${int(merchantList.apiRps)} | ${merchantList.apiP50.toFixed(1)} ms | ${ratio(merchantList.ratio)} | >= 0.67x | ${mark(merchantList.ratio >= 0.67)} |`,
  );
  lines.push(
    `| bare node:http, same queries | ${int(merchantList.bareRps)} | ${merchantList.bareP50.toFixed(1)} ms | 1.00x | | |`,
  );
  lines.push(
    '',
    `Per round (req/s): API ${merchantList.apiRoundsRps.map(int).join(', ')}; bare ${merchantList.bareRoundsRps.map(int).join(', ')}.`,
    '',
    `## 4. Ingestion, ${int(ingestion.events)} events in batches of ${ingestion.batch}, ${ingestion.concurrency} concurrent`,
    '',
  );
  lines.push('| path | events/s | against raw |', '|---|---|---|');
  lines.push(
    `| POST /v1/collect (until stored) | ${ingestion.error ? `failed: ${ingestion.error.replace(/\|/g, '/')}` : int(ingestion.collectorPerSecond)} | ${ratio(ingestion.ratio)} |`,
  );
  lines.push(
    `| raw batched INSERT ... unnest() ON CONFLICT DO NOTHING (median of 3) | ${int(ingestion.rawPerSecond)} | 1.00x |`,
  );
  lines.push(
    `| the same without the day-count trigger (median of 3) | ${int(ingestion.rawWithoutDayCountsPerSecond)} | ${ratio(ingestion.rawWithoutDayCountsPerSecond / ingestion.rawPerSecond)} |`,
  );
  lines.push(
    '',
    `Day-count trigger: ${(ingestion.triggerShare * 100).toFixed(1)}% of a 500-event insert's server time (${ingestion.triggerMsPerStatement.toFixed(2)} ms per statement, EXPLAIN ANALYZE of 20 statements); throughput with and without it differs by ${(ingestion.triggerCost * 100).toFixed(1)}% (noisy on a shared machine).`,
    '',
  );
  lines.push(
    `## 5. The driver under sustained load: \`select 1\` from ${sustained.callers} callers on a pool of ${settings.poolMax}, ${sustained.windows.length} windows of ${sustained.windowSeconds} s`,
    '',
    '| window | queries/s | against the first |',
    '|---|---|---|',
    ...sustained.windows.map((qps, i) => `| ${i + 1} | ${int(qps)} | ${ratio(qps / (sustained.windows[0] ?? qps))} |`),
    '',
    `Last against first: ${ratio(sustained.ratio)}. Unpatched postgres.js 3.4.9 fell steadily here (27k then 5.5k queries/s after 40 s); see bench/README.md.`,
    '',
  );
  lines.push('## Query plans (EXPLAIN ANALYZE, first merchant)', '');
  for (const [name, plan] of Object.entries(list.plans)) {
    lines.push(`<details><summary>${name}</summary>`, '', '```', plan, '```', '', '</details>', '');
  }
  return `${lines.join('\n')}\n`;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
