/**
 * ingestion: (1) `POST /v1/collect` in batches of 500, 4 concurrent, timed until every event is
 * stored, with statistics off (a STATS=off process: the write path) and on (the bench's API
 * process, chDB in its DATA_DIR; also timed until visible in its statistics), and on the last
 * build before the statistics (INGEST_BASELINE_REF, on a database of its own), in rounds
 * interleaved with raw batched `INSERT ... SELECT FROM unnest(...)` over postgres.js, idempotent as the API's (ids first
 * into `event_ids` ON CONFLICT DO NOTHING), with and without the day-count trigger, with CPU per
 * event by process; (2) many senders (64) posting small batches to `POST /e` on the tag's collector
 * host for a fixed time: accept rate and latency, and a check that every accepted event is stored.
 */
import path from 'node:path';
import postgres from 'postgres';
import { apiServer, BENCH_DIR, type BenchContext, freshDataDir } from '../lib/context.js';
import { commandCpuMs, processCpuMs } from '../lib/cpu.js';
import { request } from '../lib/http.js';
import { log } from '../lib/log.js';
import { runStamp, startTarget, type Target, worktreeFor } from '../lib/refs.js';
import type { SeedMerchant } from '../lib/seed.js';
import { runSenders } from '../lib/senders.js';
import { int, quantile, ratio, since } from '../lib/stats.js';
import { outboxEvents, statsEventCount, waitVisible } from '../lib/stats-visible.js';
import { mark, type Section } from './types.js';

/**
 * The last commit before the statistics (1061ebf added them): issue 32's "today's" ingestion, which
 * the write path with statistics on must keep at least 0.9x of.
 */
const INGEST_BASELINE_REF = '1061ebf^';

/** CPU per event (µs) of one run: this bench process, the API process written to (0 for raw), PostgreSQL. */
interface CpuPerEvent {
  bench: number;
  api: number;
  postgres: number;
}

interface BatchedIngestion {
  events: number;
  batch: number;
  concurrency: number;
  /** `POST /v1/collect` to a STATS=off process (the write path alone). */
  collectorPerSecond: number;
  /** The same to a process with statistics (the default: chDB in the process), until stored. */
  collectorWithStatsPerSecond: number;
  /** Events stored but not yet sent to the statistics when a statistics-on run's first clock stopped (median). */
  statsBacklog: number;
  /** The statistics-on runs timed until their summary counts every event: ingestion with statistics. */
  collectorUntilVisiblePerSecond: number;
  /** `POST /v1/collect` to the build of INGEST_BASELINE_REF (no statistics), on its own database. */
  baselinePerSecond: number;
  baselineRef: string;
  baselineSha: string;
  rawPerSecond: number;
  rawWithoutDayCountsPerSecond: number;
  ratio: number;
  triggerCost: number;
  /** The day-count trigger's time over the whole statement's, from EXPLAIN ANALYZE. */
  triggerShare: number;
  triggerMsPerStatement: number;
  /** Medians per run kind (raw, collect, collectWithStats, baseline). */
  cpu: Record<string, CpuPerEvent>;
  error?: string;
}

interface SendersIngestion {
  senders: number;
  batch: number;
  seconds: number;
  accepted: number;
  stored: number;
  refused: number;
  failed: number;
  perSecond: number;
  acceptP50: number;
  acceptP99: number;
  /** Accepted events/s against the raw batched insert rate of (1). */
  ratio: number;
}

export interface IngestionResult {
  batched: BatchedIngestion;
  senders: SendersIngestion;
}

const storedCount = async (raw: postgres.Sql, merchantId: string, prefix: string) =>
  Number(
    (await raw`select count(*)::int as n from events where merchant_id = ${merchantId} and id like ${`${prefix}-%`}`)[0]
      ?.n,
  );

async function measureBatched(ctx: BenchContext, merchant: SeedMerchant): Promise<BatchedIngestion> {
  const { raw } = ctx;
  const batch = 500;
  const concurrency = 4;
  const batches = Math.max(1, Math.ceil(ctx.settings.ingestEvents / batch));
  const total = batches * batch;
  const now = Date.now();
  const makeBatch = (prefix: string, b: number) =>
    Array.from({ length: batch }, (_, i) => ({
      id: `${prefix}-${b}-${i}`,
      event_name: i % 10 === 0 ? 'Purchase' : 'PageView',
      event_time: new Date(now - ((b * batch + i) % 86_400) * 1000).toISOString(),
      muid: `u${i % 97}`,
      data: { path: `/p/${i}`, value: i },
    }));
  // CPU per event of each run kind (µs): this bench process, the API process written to, PostgreSQL.
  const cpu = new Map<string, CpuPerEvent[]>();
  const measured = async <T>(kind: string, apiPid: number | undefined, body: () => Promise<T>): Promise<T> => {
    const bench0 = process.cpuUsage();
    const api0 = processCpuMs(apiPid);
    const pg0 = commandCpuMs('postgres');
    const value = await body();
    const bench = process.cpuUsage(bench0);
    const api1 = processCpuMs(apiPid);
    const pg1 = commandCpuMs('postgres');
    const per = (ms: number | null) => (ms === null ? Number.NaN : (ms * 1000) / total);
    const entry = {
      bench: per((bench.user + bench.system) / 1000),
      // The raw runs write to no API process: 0, not unknown.
      api: apiPid === undefined ? 0 : api0 === null || api1 === null ? Number.NaN : per(api1 - api0),
      postgres: pg0 === null || pg1 === null ? Number.NaN : per(pg1 - pg0),
    };
    cpu.set(kind, [...(cpu.get(kind) ?? []), entry]);
    return value;
  };
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
  const insertRaw = (prefix: string) => async (b: number) => {
    const rows = makeBatch(prefix, b);
    // The statement takes its transaction's seqs once, as the API's insert does (migration 0026);
    // leaving seq out would fire the per-row fallback trigger and measure that instead. Idempotent
    // as the API's insert is: `events` has no unique key since it is partitioned (migration 0028),
    // so its ids go into `event_ids` first and only the ids won are inserted (a bare ON CONFLICT
    // on `events` would check nothing and store repeats).
    await raw`with t as (
        select * from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.muid)}::text[],
          ${rows.map((r) => r.event_name)}::text[], ${rows.map((r) => r.event_time)}::timestamptz[],
          ${rows.map((r) => JSON.stringify(r.data))}::text[]) with ordinality as t(id, muid, event_name, event_time, raw_data, n)
      ), b as (select events_take_seqs(${rows.length}::int) - 1 as before
      ), ids as (
        insert into event_ids (merchant_id, id, event_time)
        select ${merchant.merchantId}::uuid, id, event_time from t
        on conflict do nothing
        returning id
      )
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
      select ${merchant.merchantId}::uuid, t.id, ${merchant.tagId}::uuid, muid, event_name, event_time, raw_data,
        b.before + n
      from t join ids on ids.id = t.id cross join b`;
  };
  // ctx.api runs with statistics, as every process does by default; the write path alone is a
  // process with STATS=off (no outbox row, no ClickHouse), started for the section.
  const offBase = await apiServer(ctx.settings, ctx.url, 'API server, STATS=off', {
    dataDir: freshDataDir('ingestion-stats-off'),
  });
  const writePath = await ctx.spawn({ ...offBase, env: { ...offBase.env, STATS: 'off' } });
  // Where a collect run writes: this tree's merchant, or the baseline build's on its own database.
  interface Sink {
    tagId: string;
    merchantId: string;
    db: postgres.Sql;
  }
  const here: Sink = { tagId: merchant.tagId, merchantId: merchant.merchantId, db: raw };
  const sendCollect = (url: string, prefix: string, sink: Sink) => async (b: number) => {
    const res = await request(`${url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId: sink.tagId, events: makeBatch(prefix, b) }),
    });
    if (res.status >= 300) throw new Error(`collect: ${res.status} ${res.body.slice(0, 200)}`);
  };
  // The API runs the direct path: a 202 means stored, so the clock stops at the last answer. The
  // count that checks it runs after the run, outside its time and CPU: it reads every event of the
  // merchant, and it once cost a collect run a tenth of its time that the raw runs never paid.
  const timeCollect = async (url: string, prefix: string, sink: Sink) =>
    total / (await run(sendCollect(url, prefix, sink)));
  const allStored = async (prefix: string, sink: Sink) => {
    const deadline = Date.now() + 60_000;
    while ((await storedCount(sink.db, sink.merchantId, prefix)) < total) {
      if (Date.now() > deadline) throw new Error('collect: accepted events were not all stored within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  // Each run starts from the same state: the last run's dead rows vacuumed and its pages written
  // out, so an autovacuum or a checkpoint (and the full-page images after it) never lands in
  // whichever run happens to be timed then.
  const settle = async () => {
    await raw`vacuum (analyze) events, event_ids, stats_outbox`;
    if (baseline) await baseline.sink.db`vacuum (analyze) events`;
    // CHECKPOINT needs a superuser or pg_checkpoint (BENCH_DATABASE_URL may give neither).
    await raw`checkpoint`.catch(() => {});
  };
  // Sending stored events to the statistics runs on the same cores: the next run starts once every
  // collected event is sent, so it never slows another run.
  const sent = async () => {
    const deadline = Date.now() + 120_000;
    while ((await outboxEvents(raw)) > 0) {
      if (Date.now() > deadline) throw new Error('collect: stats_outbox not empty after 120 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  // Three rounds of raw inserts with and without the day-count trigger and of the collector with
  // and without statistics, in an order rotated each round (the medians of each): the table grows
  // through the runs and a later run writes into larger indexes, so a fixed order would favour
  // whichever runs first.
  const withTrigger: number[] = [];
  const withoutTrigger: number[] = [];
  const collected: number[] = [];
  const collectedWithStats: number[] = [];
  const collectedBaseline: number[] = [];
  const backlog: number[] = [];
  const collectedUntilVisible: number[] = [];
  let collectError: string | undefined;
  const collect = async (
    kind: string,
    pid: number | undefined,
    url: string,
    prefix: string,
    into: number[],
    sink: Sink = here,
  ) => {
    if (collectError) return;
    try {
      const withStats = kind === 'collectWithStats';
      // The statistics' count before the run (outside its clock): the run's events come on top.
      const before = withStats ? await statsEventCount(url, ctx.auth, sink.merchantId) : 0;
      into.push(
        await measured(kind, pid, async () => {
          const start = process.hrtime.bigint();
          const rate = await timeCollect(url, prefix, sink);
          if (withStats) {
            // What was not yet sent to the statistics when the clock stopped; a second clock runs
            // on until the summary counts every event (the process's CPU counted in this run's).
            backlog.push(await outboxEvents(raw, sink.merchantId));
            await waitVisible(raw, url, ctx.auth, sink.merchantId, before + total);
            collectedUntilVisible.push(total / (since(start) / 1000));
          }
          return rate;
        }),
      );
      await allStored(prefix, sink);
      await sent();
    } catch (error) {
      collectError = error instanceof Error ? error.message : String(error);
      log(`bench: ingestion through the collector failed: ${collectError}`);
    }
  };
  const runs = {
    raw: async (round: number) => {
      withTrigger.push(total / (await measured('raw', undefined, () => run(insertRaw(`raw${round}`)))));
    },
    bare: async (round: number) => {
      await raw`alter table events disable trigger events_day_counts_insert`;
      try {
        withoutTrigger.push(total / (await run(insertRaw(`bare${round}`))));
      } finally {
        await raw`alter table events enable trigger events_day_counts_insert`;
      }
    },
    collect: (round: number) => collect('collect', writePath.process.pid, writePath.url, `api${round}`, collected),
    collectWithStats: (round: number) =>
      collect('collectWithStats', ctx.api.process.pid, ctx.api.url, `stats${round}`, collectedWithStats),
    baseline: async (round: number) => {
      if (!baseline) return;
      const { target, sink } = baseline;
      await collect('baseline', target.server.process.pid, target.server.url, `base${round}`, collectedBaseline, sink);
    },
  };
  const kinds = Object.keys(runs) as (keyof typeof runs)[];
  // The build before the statistics, as its `pnpm start` runs it, on a database of its own.
  const { dir, sha: baselineSha } = worktreeFor(path.resolve(BENCH_DIR, '..'), INGEST_BASELINE_REF);
  const stamp = runStamp();
  let baseline: { target: Target; sink: Sink } | undefined;
  try {
    const target = await startTarget(ctx, 'baseline', path.join(dir, 'packages/server'), stamp, false, {
      section: 'ingestion',
      merchants: 1,
      processes: 1,
    });
    const db = postgres(target.databaseUrl, { max: 1, onnotice: () => {} });
    baseline = { target, sink: { tagId: target.tagIds[0] as string, merchantId: target.hotMerchantId, db } };
  } catch (error) {
    collectError = `baseline ${INGEST_BASELINE_REF}: ${error instanceof Error ? error.message : String(error)}`;
    log(`bench: ${collectError}`);
  }
  try {
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < kinds.length; k++) {
        await settle();
        await runs[kinds[(k + round) % kinds.length]!](round);
      }
    }
  } finally {
    await writePath.stop();
    if (baseline) {
      await baseline.sink.db.end({ timeout: 5 });
      await baseline.target.server.stop().catch(() => {});
      await baseline.target.dropDatabase().catch(() => {});
    }
  }
  const rawPerSecond = quantile(withTrigger, 0.5);
  const rawWithoutDayCountsPerSecond = quantile(withoutTrigger, 0.5);
  // The trigger's own share of the insert's server time, from EXPLAIN ANALYZE of 500-event
  // statements (PostgreSQL times each trigger): unlike throughput, not moved by the neighbours.
  let triggerMs = 0;
  let statementMs = 0;
  for (let b = 0; b < 20; b++) {
    const rows = makeBatch('explain', b);
    const [plan] = await raw.unsafe(
      // seq given (0: these rows are never streamed) so the per-row seq fallback trigger of
      // migration 0026 stays out of the statement's time.
      `explain (analyze, format json) insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
       select $1::uuid, id, $2::uuid, muid, event_name, event_time, raw_data, 0
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
    type Trigger = { 'Trigger Name': string; Time: number };
    type Explained = { 'Execution Time': number; Triggers?: Trigger[] };
    const explained = ((plan?.['QUERY PLAN'] ?? []) as Explained[])[0];
    statementMs += explained?.['Execution Time'] ?? 0;
    for (const trigger of explained?.Triggers ?? []) {
      if (trigger['Trigger Name'] === 'events_day_counts_insert') triggerMs += Number(trigger.Time);
    }
  }
  const result: BatchedIngestion = {
    events: total,
    batch,
    concurrency,
    collectorPerSecond: Number.NaN,
    collectorWithStatsPerSecond: Number.NaN,
    baselinePerSecond: Number.NaN,
    statsBacklog: quantile(backlog, 0.5),
    collectorUntilVisiblePerSecond: quantile(collectedUntilVisible, 0.5),
    baselineRef: INGEST_BASELINE_REF,
    baselineSha,
    rawPerSecond,
    rawWithoutDayCountsPerSecond,
    ratio: Number.NaN,
    triggerCost: 1 - rawPerSecond / rawWithoutDayCountsPerSecond,
    triggerShare: triggerMs / statementMs,
    triggerMsPerStatement: triggerMs / 20,
    cpu: Object.fromEntries(
      [...cpu].map(([kind, runs]) => [
        kind,
        {
          bench: quantile(
            runs.map((r) => r.bench),
            0.5,
          ),
          api: quantile(
            runs.map((r) => r.api),
            0.5,
          ),
          postgres: quantile(
            runs.map((r) => r.postgres),
            0.5,
          ),
        },
      ]),
    ),
  };
  if (collectError) result.error = collectError;
  else {
    result.collectorPerSecond = quantile(collected, 0.5);
    result.collectorWithStatsPerSecond = quantile(collectedWithStats, 0.5);
    result.baselinePerSecond = quantile(collectedBaseline, 0.5);
    result.ratio = result.collectorPerSecond / result.rawPerSecond;
  }
  return result;
}

/** `POST /e` on the collector host from many senders for a fixed time (was bench:ingest). */
async function measureSenders(ctx: BenchContext, merchant: SeedMerchant, rawPerSecond: number) {
  const run = await runSenders({
    url: ctx.api.url,
    host: `${ctx.partner.record.name}.${ctx.partner.domain}`,
    tagId: merchant.tagId,
    prefix: 'snd',
    senders: ctx.settings.quick ? 16 : 64,
    seconds: ctx.settings.durationSeconds,
  });
  // Every accepted event must be stored: wait for the queue to drain.
  const expected = run.accepted + run.warm;
  const until = Date.now() + 60_000;
  let stored = await storedCount(ctx.raw, merchant.merchantId, 'snd');
  while (stored < expected && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    stored = await storedCount(ctx.raw, merchant.merchantId, 'snd');
  }
  const result: SendersIngestion = {
    senders: run.senders,
    batch: run.batch,
    seconds: run.seconds,
    accepted: run.accepted,
    stored: stored - run.warm,
    refused: run.refused,
    failed: run.failed,
    perSecond: run.perSecond,
    acceptP50: run.acceptP50,
    acceptP99: run.acceptP99,
    ratio: run.perSecond / rawPerSecond,
  };
  log(
    `  ingestion: /e ${result.senders} senders ${int(result.perSecond)} events/s, p99 ${result.acceptP99.toFixed(1)} ms`,
  );
  return result;
}

/** The CPU each path spends per event, by process: where the collector's time goes against raw. */
function cpuReport(batched: BatchedIngestion): string[] {
  const rows: [string, string][] = [
    ['raw', 'raw insert'],
    ['collect', 'POST /v1/collect, STATS=off'],
    ['collectWithStats', 'POST /v1/collect, statistics on'],
    ['baseline', `POST /v1/collect, ${batched.baselineRef} (no statistics)`],
  ];
  const us = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
  const lines = rows.flatMap(([kind, label]) => {
    const c = batched.cpu[kind];
    return c
      ? [`| ${label} | ${us(c.bench)} | ${us(c.api)} | ${us(c.postgres)} | ${us(c.bench + c.api + c.postgres)} |`]
      : [];
  });
  if (lines.length === 0) return [];
  return [
    'CPU per event (µs, medians of the runs; 2 cores in all):',
    '',
    '| run | bench process | API process | PostgreSQL | total |',
    '|---|---|---|---|---|',
    ...lines,
    '',
  ];
}

export const ingestion: Section<IngestionResult> = {
  title: 'Ingestion',
  async run(ctx) {
    const batched = await measureBatched(ctx, ctx.spareMerchant);
    log(
      `  ingestion: collect ${int(batched.collectorPerSecond)} events/s with statistics off, ${int(batched.collectorWithStatsPerSecond)} on (${int(batched.collectorUntilVisiblePerSecond)} until visible), raw ${int(batched.rawPerSecond)} events/s`,
    );
    const senders = await measureSenders(ctx, ctx.spareMerchant, batched.rawPerSecond);
    return { batched, senders };
  },
  targets(result) {
    const { batched } = result;
    const withStats = batched.collectorUntilVisiblePerSecond / batched.baselinePerSecond;
    const onOff = batched.collectorUntilVisiblePerSecond / batched.collectorPerSecond;
    return [
      {
        what: 'POST /v1/collect, the write path (STATS=off) against raw inserts (issue 37)',
        target: '>= 0.7x',
        value: ratio(batched.ratio),
        met: Number.isFinite(batched.ratio) ? batched.ratio >= 0.7 : false,
      },
      {
        what: 'POST /v1/collect with statistics on, until visible in them, against STATS=off until stored (issue 55)',
        target: '>= 0.9x',
        value: ratio(onOff),
        met: Number.isFinite(onOff) ? onOff >= 0.9 : false,
      },
      {
        what: `POST /v1/collect until stored and visible in the statistics against ${batched.baselineRef}'s until stored, the last build before the statistics (issue 32)`,
        target: '>= 0.9x',
        value: ratio(withStats),
        met: Number.isFinite(withStats) ? withStats >= 0.9 : false,
      },
      {
        what: '/e: every accepted event stored',
        target: 'stored = accepted',
        value: `${int(result.senders.stored)} / ${int(result.senders.accepted)}`,
        met: result.senders.stored === result.senders.accepted,
      },
    ];
  },
  report({ batched, senders }) {
    return [
      `## Ingestion: ${int(batched.events)} events in batches of ${batched.batch}, ${batched.concurrency} concurrent`,
      '',
      '| path | events/s | against raw |',
      '|---|---|---|',
      `| POST /v1/collect (until stored, median of 3; a STATS=off process: the write path alone) | ${batched.error ? `failed: ${batched.error.replace(/\|/g, '/')}` : int(batched.collectorPerSecond)} | ${ratio(batched.ratio)} |`,
      `| the same to a process with statistics (chDB in the process; ${ratio(batched.collectorWithStatsPerSecond / batched.collectorPerSecond)} of the write path alone) | ${int(batched.collectorWithStatsPerSecond)} | ${ratio(batched.collectorWithStatsPerSecond / batched.rawPerSecond)} |`,
      `| the same, timed until the statistics count every event (the targets' row: ${ratio(batched.collectorUntilVisiblePerSecond / batched.collectorPerSecond)} of the write path alone) | ${int(batched.collectorUntilVisiblePerSecond)} | ${ratio(batched.collectorUntilVisiblePerSecond / batched.rawPerSecond)} |`,
      `| POST /v1/collect on ${batched.baselineRef} (${batched.baselineSha.slice(0, 7)}, before the statistics; its own database, median of 3) | ${int(batched.baselinePerSecond)} | ${ratio(batched.baselinePerSecond / batched.rawPerSecond)} |`,
      `| raw batched INSERT ... unnest(), ids first into event_ids ON CONFLICT DO NOTHING (median of 3) | ${int(batched.rawPerSecond)} | 1.00x |`,
      `| the same without the day-count trigger (median of 3) | ${int(batched.rawWithoutDayCountsPerSecond)} | ${ratio(batched.rawWithoutDayCountsPerSecond / batched.rawPerSecond)} |`,
      '',
      ...cpuReport(batched),
      `Not yet sent to the statistics when a statistics-on run's first clock stopped (median): ${int(batched.statsBacklog)} of ${int(batched.events)} events; the second clock runs until the merchant's \`stats_outbox\` rows are gone and its summary counts every event.`,
      '',
      `Day-count trigger: ${(batched.triggerShare * 100).toFixed(1)}% of a 500-event insert's server time (${batched.triggerMsPerStatement.toFixed(2)} ms per statement, EXPLAIN ANALYZE of 20 statements); throughput with and without it differs by ${(batched.triggerCost * 100).toFixed(1)}% (noisy on a shared machine).`,
      '',
      `### POST /e on the collector host: ${senders.senders} senders x ${senders.batch} events, ${senders.seconds.toFixed(1)} s`,
      '',
      '| accepted events/s | accept p50 | accept p99 | against raw | accepted | stored | refused (503) / failed | every accepted stored |',
      '|---|---|---|---|---|---|---|---|',
      `| ${int(senders.perSecond)} | ${senders.acceptP50.toFixed(1)} ms | ${senders.acceptP99.toFixed(1)} ms | ${ratio(senders.ratio)} | ${int(senders.accepted)} | ${int(senders.stored)} | ${senders.refused} / ${senders.failed} | ${mark(senders.stored === senders.accepted)} |`,
      '',
    ];
  },
};
