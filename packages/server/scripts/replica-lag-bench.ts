/**
 * `npx tsx scripts/replica-lag-bench.ts`: the read replica's replay lag while the collector takes a
 * steady write load (issue 36, docs/decisions/replica-reads.md). A primary and a streaming replica
 * of our own on loopback (src/testing/pg-replica.mjs, removed at the end), the app in this process
 * with DATABASE_READ_URL. Phases: `idle` (no load), `load` (REPLICA_BENCH_SENDERS collect loops of
 * 10 events for REPLICA_BENCH_SECONDS, default 60), `after` (load stopped). Throughout, one reader
 * asks the event list and the statistics summary in turn. Prints JSON per phase: the lag gauges
 * (`partner_tags_db_replica_lag_seconds`/`_bytes`, sampled every 100 ms: p50/p99/max) next to the
 * primary's own view (`pg_stat_replication.replay_lag` and its unreplayed bytes), collect
 * latency and events/s, and the reads answered by the replica and by the primary with the reasons.
 */
import os from 'node:os';
import postgres from 'postgres';
import { quantile, startTestServer } from '../src/testing/index.js';
import { startPgReplica } from '../src/testing/pg-replica.mjs';
import { merchantWithTag, partnerCall, startCollectLoad } from './lib/collect-load.js';

const SECONDS = Number(process.env.REPLICA_BENCH_SECONDS ?? 60);
const SENDERS = Number(process.env.REPLICA_BENCH_SENDERS ?? 8);
const IDLE_SECONDS = 10;
const AFTER_SECONDS = 10;
const PER_REQUEST = 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const pair = await startPgReplica({ timeoutMs: 120_000 });
const admin = postgres(pair.primaryUrl(), { max: 1, onnotice: () => {} });
await admin`create database app`;
await admin.end();
const server = await startTestServer({
  databaseUrl: pair.primaryUrl('app'),
  env: {
    LOG_LEVEL: 'warn',
    DATABASE_READ_URL: pair.replicaUrl('app'),
    DB_READ_CHECK_INTERVAL: '200ms',
    METRICS_PORT: '0',
    TAG_MONITOR: 'off',
    EVENT_RETENTION: 'off',
    WEBHOOK_DELIVERY: 'off',
  },
});

/** Every sample of the app's own metrics text whose name starts with `prefix`, by name and labels. */
async function metrics(prefix: string): Promise<Map<string, number>> {
  const { body } = await server.app.deps.metrics.render();
  const out = new Map<string, number>();
  for (const line of body.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}
const READS = 'partner_tags_db_reads_total';
const FALLBACKS = 'partner_tags_db_replica_fallbacks_total';

/** Non-zero changes of the read counters between two snapshots, labels shortened. */
function readsBetween(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta > 0) out[key.replace(/^partner_tags_db_/, '').replace(/"/g, '')] = delta;
  }
  return out;
}

try {
  const call = partnerCall(server);
  const live = await merchantWithTag(server, 'Live');
  const today = new Date().toISOString().slice(0, 10);
  const readPaths = [
    `/v1/partners/events?merchantId=${live.merchantId}&limit=100`,
    `/v1/partners/stats/summary?merchantId=${live.merchantId}&startDate=${today}&endDate=${today}&timezone=UTC`,
  ];

  type Phase = 'idle' | 'load' | 'after';
  let phase: Phase | undefined = 'idle';
  const lag = new Map<Phase, Record<'seconds' | 'bytes' | 'pgSeconds' | 'pgBytes', number[]>>();
  const primary = postgres(pair.primaryUrl(), { max: 1, onnotice: () => {} });
  let readErrors = 0;
  // The lag gauges every 100 ms (the routing measures every 200 ms), and one reader in turn.
  const sampler = (async () => {
    while (phase !== undefined) {
      const m = await metrics('partner_tags_db_replica_lag_');
      const [pg] = await primary`select coalesce(extract(epoch from replay_lag), 0)::float8 as seconds,
        pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::float8 as bytes from pg_stat_replication`;
      const into = lag.get(phase) ?? { seconds: [], bytes: [], pgSeconds: [], pgBytes: [] };
      into.seconds.push(m.get('partner_tags_db_replica_lag_seconds') ?? Number.NaN);
      into.bytes.push(m.get('partner_tags_db_replica_lag_bytes') ?? Number.NaN);
      into.pgSeconds.push(pg?.seconds ?? Number.NaN);
      into.pgBytes.push(pg?.bytes ?? Number.NaN);
      lag.set(phase, into);
      await sleep(100);
    }
  })();
  const reader = (async () => {
    for (let i = 0; phase !== undefined; i++) {
      const res = await call(readPaths[i % readPaths.length]!, undefined, 'GET');
      if (res.status !== 200) readErrors++;
    }
  })();

  const snapshots: Partial<Record<Phase | 'end', Map<string, number>>> = {};
  const counters = async () => new Map([...(await metrics(READS)), ...(await metrics(FALLBACKS))]);
  snapshots.idle = await counters();
  await sleep(IDLE_SECONDS * 1000);

  phase = 'load';
  snapshots.load = await counters();
  const collect = startCollectLoad<'load'>(server, live.tagId, {
    first: 'load',
    senders: SENDERS,
    perRequest: PER_REQUEST,
  });
  const loadStarted = performance.now();
  await sleep(SECONDS * 1000);
  await collect.stop();
  const loadSeconds = (performance.now() - loadStarted) / 1000;

  phase = 'after';
  snapshots.after = await counters();
  await sleep(AFTER_SECONDS * 1000);
  snapshots.end = await counters();
  phase = undefined;
  await Promise.all([sampler, reader]);
  await primary.end({ timeout: 2 });

  const spread = (values: number[], digits: number) => {
    const known = values.filter((v) => Number.isFinite(v));
    const round = (v: number) => Number(v.toFixed(digits));
    return {
      samples: values.length,
      unmeasured: values.length - known.length,
      p50: round(quantile(known, 0.5)),
      p99: round(quantile(known, 0.99)),
      max: round(known.reduce((a, b) => Math.max(a, b), 0)),
    };
  };
  const phaseReport = (p: Phase, from: Map<string, number>, to: Map<string, number>) => ({
    lagSeconds: spread(lag.get(p)?.seconds ?? [], 3),
    lagBytes: spread(lag.get(p)?.bytes ?? [], 0),
    pgReplayLagSeconds: spread(lag.get(p)?.pgSeconds ?? [], 4),
    pgUnreplayedBytes: spread(lag.get(p)?.pgBytes ?? [], 0),
    reads: readsBetween(from, to),
  });
  const collected = collect.summary('load');
  process.stdout.write(
    `${JSON.stringify(
      {
        replicaStartupMs: pair.startupMs,
        checkIntervalMs: 200,
        idle: phaseReport('idle', snapshots.idle, snapshots.load),
        load: {
          seconds: Number(loadSeconds.toFixed(1)),
          senders: SENDERS,
          eventsPerSecond: Math.round((collected.requests * PER_REQUEST) / loadSeconds),
          collect: collected,
          collectErrors: collect.errors,
          ...phaseReport('load', snapshots.load, snapshots.after),
        },
        after: phaseReport('after', snapshots.after, snapshots.end),
        readErrors,
        loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await server.close();
  await pair.stop();
}
