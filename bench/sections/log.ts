/**
 * log: ingestion in log mode (EVENT_LOG_URL, NATS JetStream) against the direct path, same run,
 * same database. (1) `POST /v1/collect` in batches of 500, 4 concurrent: the direct API until
 * stored, against a log-mode API (ROLE=api) with one writer process (ROLE=writer): until every
 * 202 (accepted) and until every event is stored (drained); drained again by a writer with
 * statistics off (ROLE=all, STATS=off) and on (ROLE=all, chDB in its DATA_DIR: until visible in
 * its statistics), as chDB needs the one process of ROLE=all; (2) 64 senders on `POST /e` in log
 * mode: accept latency with the writers stopped (they run elsewhere in the topology), then with
 * one writer draining on the same cores, and every 202 stored afterwards; (3) lag from 202 to readable (a poller reading `seq > last` every 5 ms);
 * (4) a backlog over 4 merchants drained by 1 writer, then by 4 writers.
 * Needs NATS with JetStream (NATS_URL, default nats://127.0.0.1:4222); skipped with a message
 * otherwise. The stream is named after the run and deleted at the end.
 */
import net from 'node:net';
import { deleteLogStream } from '@partner/server/bench';
import { apiServer, BENCH_DIR, type BenchContext } from '../lib/context.js';
import { request, requestJson } from '../lib/http.js';
import { log } from '../lib/log.js';
import type { SeedMerchant } from '../lib/seed.js';
import { runSenders } from '../lib/senders.js';
import { int, quantile, ratio } from '../lib/stats.js';
import { outboxEvents, statsEventCount, waitVisible } from '../lib/stats-visible.js';
import type { Section } from './types.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

export interface LogResult {
  skipped?: string;
  /** The JetStream settings the run used (the server's defaults unless set in the environment). */
  settings: Record<string, string>;
  batched: {
    events: number;
    batch: number;
    concurrency: number;
    directStoredPerSecond: number;
    acceptedPerSecond: number;
    drainedPerSecond: number;
    /** Accepted (log) / stored (direct): goal >= 1.5. */
    acceptRatio: number;
    /** Drained (log) / stored (direct): goal >= 0.9. */
    drainRatio: number;
    /** Drained by a writer with statistics off (ROLE=all, STATS=off): the write path alone. */
    drainedStatsOffPerSecond: number;
    /** Drained by a writer with statistics on (ROLE=all, chDB): until stored, until visible in them. */
    drainedStatsOnPerSecond: number;
    visibleStatsOnPerSecond: number;
    /** Events stored but not yet sent to the statistics when the statistics-on run's first clock stopped. */
    statsBacklog: number;
  };
  senders: {
    /** Events answered 202 by the untimed warm-up round. */
    warm: number;
    senders: number;
    batch: number;
    seconds: number;
    accepted: number;
    refused: number;
    failed: number;
    perSecond: number;
    acceptP50: number;
    acceptP99: number;
  };
  /**
   * The same senders against the bare collector (bench/bare-collector.ts: read, JSON.parse,
   * minimal shape check, 202, nothing stored), right after: what the machine allows at all.
   */
  floor: { perSecond: number; acceptP50: number; acceptP99: number };
  /** Events the two sender runs got a 202 for (timed and warm-up), and how many of them are stored. */
  sendersStored: { accepted: number; stored: number };
  /** The same senders with one writer process (and PostgreSQL) draining on the same 2 cores. */
  sendersSharingCores: LogResult['senders'];
  lag: { samples: number; p50: number; p99: number; max: number };
  writers: { merchants: number; events: number; one: number; four: number; ratio: number };
}

function natsAnswers(): Promise<boolean> {
  const url = new URL(NATS_URL.replace(/^nats:/, 'http:'));
  return new Promise((resolve) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port || 4222) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Merchants with a live tag of their own: the seeded merchants stay as the other sections expect them. */
async function freshMerchants(ctx: BenchContext, count: number): Promise<SeedMerchant[]> {
  const out: SeedMerchant[] = [];
  for (let i = 0; i < count; i++) {
    const { merchantId } = await requestJson<{ merchantId: string }>(`${ctx.api.url}/v1/partners/merchant`, {
      method: 'POST',
      headers: ctx.auth,
      body: { name: `Log bench merchant ${i}` },
      expect: 201,
    });
    const res = await request(`${ctx.api.url}/v1/partners/tag/generate`, {
      method: 'POST',
      headers: { ...ctx.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ merchantId, domain: ctx.partner.domain }),
    });
    if (res.status >= 300) throw new Error(`tag/generate: ${res.status} ${res.body}`);
    out.push({ merchantId, tagId: (JSON.parse(res.body) as { tagId: string }).tagId });
  }
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function countLike(ctx: BenchContext, merchantIds: string[], prefix: string): Promise<number> {
  const [row] = await ctx.raw`select count(*)::int as n from events
    where merchant_id = any(${merchantIds}::uuid[]) and id like ${`${prefix}-%`}`;
  return Number(row?.n ?? 0);
}

async function waitStored(ctx: BenchContext, merchantIds: string[], prefix: string, total: number): Promise<void> {
  const deadline = Date.now() + 180_000;
  while ((await countLike(ctx, merchantIds, prefix)) < total) {
    if (Date.now() > deadline) throw new Error(`log: ${prefix}: not all stored within 180 s`);
    await sleep(20);
  }
}

/** Sends `total` events to `/v1/collect` of `url` for the merchants, batch by batch; resolves when every one got 202. */
async function sendBatches(
  url: string,
  merchants: SeedMerchant[],
  prefix: string,
  batches: number,
  batch: number,
  concurrency: number,
): Promise<void> {
  let next = 0;
  const now = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let b = next++; b < batches; b = next++) {
        const merchant = merchants[b % merchants.length] as SeedMerchant;
        const events = Array.from({ length: batch }, (_, i) => ({
          id: `${prefix}-${b}-${i}`,
          event_name: i % 10 === 0 ? 'Purchase' : 'PageView',
          event_time: new Date(now - ((b * batch + i) % 86_400) * 1000).toISOString(),
          muid: `u${i % 97}`,
          data: { path: `/p/${i}`, value: i },
        }));
        for (;;) {
          const res = await request(`${url}/v1/collect`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ tagId: merchant.tagId, events }),
          });
          if (res.status === 202) break;
          if (res.status !== 503) throw new Error(`collect: ${res.status} ${res.body.slice(0, 200)}`);
          await sleep(100);
        }
      }
    }),
  );
}

export const logSection: Section<LogResult> = {
  title: 'Log mode ingestion',
  async run(ctx) {
    const settings: Record<string, string> = {
      retention: 'workqueue',
      discard: 'new',
      storage: 'file',
      max_bytes: process.env.EVENT_LOG_MAX_BYTES ?? '1073741824',
      max_age: `${process.env.EVENT_LOG_MAX_AGE_SECONDS ?? '604800'} s`,
      duplicate_window: `${process.env.EVENT_LOG_DUPLICATE_WINDOW_SECONDS ?? '600'} s`,
      replicas: process.env.EVENT_LOG_REPLICAS ?? '1',
      ack_wait: `${process.env.EVENT_LOG_ACK_WAIT_SECONDS ?? '30'} s`,
      max_ack_pending: process.env.EVENT_LOG_MAX_ACK_PENDING ?? '20000',
      publish_timeout: `${process.env.EVENT_LOG_PUBLISH_TIMEOUT_MS ?? '1200'} ms`,
    };
    const empty: LogResult = {
      settings,
      batched: {
        events: 0,
        batch: 0,
        concurrency: 0,
        directStoredPerSecond: Number.NaN,
        acceptedPerSecond: Number.NaN,
        drainedPerSecond: Number.NaN,
        acceptRatio: Number.NaN,
        drainRatio: Number.NaN,
        drainedStatsOffPerSecond: Number.NaN,
        drainedStatsOnPerSecond: Number.NaN,
        visibleStatsOnPerSecond: Number.NaN,
        statsBacklog: Number.NaN,
      },
      senders: noSenders,
      sendersSharingCores: noSenders,
      sendersStored: { accepted: 0, stored: 0 },
      floor: { perSecond: Number.NaN, acceptP50: Number.NaN, acceptP99: Number.NaN },
      lag: { samples: 0, p50: Number.NaN, p99: Number.NaN, max: Number.NaN },
      writers: { merchants: 0, events: 0, one: Number.NaN, four: Number.NaN, ratio: Number.NaN },
    };
    if (!(await natsAnswers())) {
      const skipped = `NATS does not answer at ${NATS_URL} (set NATS_URL; Debian: nats-server -js)`;
      log(`bench: log section skipped: ${skipped}`);
      return { ...empty, skipped };
    }
    const prefix = `bench_${Date.now().toString(36)}`;
    const base = await apiServer(ctx.settings, ctx.url, 'log-mode API');
    const logEnv = { ...base.env, EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix };
    const logApi = await ctx.spawn({ ...base, env: { ...logEnv, ROLE: 'api' } });
    const writer = (writers: number) =>
      ctx.spawn({
        ...base,
        name: `log writer x${writers}`,
        env: { ...logEnv, ROLE: 'writer', EVENT_LOG_WRITERS: String(writers) },
      });
    const result = empty;
    try {
      // (1) Direct against log mode, same batches. Direct first (its own merchant), then the log.
      const batch = 500;
      const concurrency = 4;
      const batches = Math.max(1, Math.ceil(ctx.settings.ingestEvents / batch));
      const total = batches * batch;
      const spare = [ctx.spareMerchant];
      const spareIds = [ctx.spareMerchant.merchantId];
      let t0 = performance.now();
      await sendBatches(ctx.api.url, spare, 'ldirect', batches, batch, concurrency);
      await waitStored(ctx, spareIds, 'ldirect', total);
      const directStoredPerSecond = total / ((performance.now() - t0) / 1000);
      const oneWriter = await writer(1);
      t0 = performance.now();
      await sendBatches(logApi.url, spare, 'llog', batches, batch, concurrency);
      const acceptedPerSecond = total / ((performance.now() - t0) / 1000);
      await waitStored(ctx, spareIds, 'llog', total);
      const drainedPerSecond = total / ((performance.now() - t0) / 1000);
      await oneWriter.stop();
      // Statistics off and on in the writer (issues 32 and 55). chDB is one process's, so a writer
      // with statistics runs as ROLE=all (its own DATA_DIR, its store marked loaded: it holds what
      // it stores); the one without is the same process with STATS=off.
      const statsWriter = async (stats: 'on' | 'off') => {
        const own = await apiServer(ctx.settings, ctx.url, `log writer, statistics ${stats}`);
        const env = {
          ...logEnv,
          DATA_DIR: own.env.DATA_DIR as string,
          ROLE: 'all',
          EVENT_LOG_WRITERS: '1',
          STATS: stats,
        };
        const child = await ctx.spawn({ ...own, env });
        // One batch through it first, untimed: a new process's first insert (and chDB's) is not
        // what a run of this size should measure.
        await sendBatches(logApi.url, spare, `llogw${stats}`, 1, batch, 1);
        await waitStored(ctx, spareIds, `llogw${stats}`, batch);
        // ... and sent to its statistics, so the count read before the timed run includes it.
        while ((await outboxEvents(ctx.raw, ctx.spareMerchant.merchantId)) > 0) await sleep(10);
        return child;
      };
      const offWriter = await statsWriter('off');
      t0 = performance.now();
      await sendBatches(logApi.url, spare, 'llogoff', batches, batch, concurrency);
      await waitStored(ctx, spareIds, 'llogoff', total);
      const drainedStatsOffPerSecond = total / ((performance.now() - t0) / 1000);
      await offWriter.stop();
      const onWriter = await statsWriter('on');
      const before = await statsEventCount(onWriter.url, ctx.auth, ctx.spareMerchant.merchantId);
      t0 = performance.now();
      await sendBatches(logApi.url, spare, 'llogon', batches, batch, concurrency);
      await waitStored(ctx, spareIds, 'llogon', total);
      const drainedStatsOnPerSecond = total / ((performance.now() - t0) / 1000);
      const statsBacklog = await outboxEvents(ctx.raw, ctx.spareMerchant.merchantId);
      await waitVisible(ctx.raw, onWriter.url, ctx.auth, ctx.spareMerchant.merchantId, before + total);
      const visibleStatsOnPerSecond = total / ((performance.now() - t0) / 1000);
      await onWriter.stop();
      result.batched = {
        events: total,
        batch,
        concurrency,
        directStoredPerSecond,
        acceptedPerSecond,
        drainedPerSecond,
        acceptRatio: acceptedPerSecond / directStoredPerSecond,
        drainRatio: drainedPerSecond / directStoredPerSecond,
        drainedStatsOffPerSecond,
        drainedStatsOnPerSecond,
        visibleStatsOnPerSecond,
        statsBacklog,
      };
      log(
        `  log: direct stored ${int(directStoredPerSecond)}/s, log accepted ${int(acceptedPerSecond)}/s, drained ${int(drainedPerSecond)}/s; statistics off ${int(drainedStatsOffPerSecond)}/s, on ${int(drainedStatsOnPerSecond)}/s (${int(visibleStatsOnPerSecond)}/s until visible)`,
      );

      // (2) 64 senders x 20 events on POST /e of the collector host, log mode. The accept path is
      // timed with the writer stopped: in the topology (docs/scaling.md) writers and PostgreSQL run
      // on their own machines, while here they would take about half of the 2 cores the senders
      // and the collector share (the floor below runs with nothing else either). The backlog
      // it leaves is drained and counted below; the same senders are then timed again with the
      // writer draining on the same cores, for the record.
      result.senders = await senders(ctx, logApi.url, 'lsnd');
      log(`  log: /e ${result.senders.senders} senders p99 ${result.senders.acceptP99.toFixed(1)} ms (writer stopped)`);
      // The floor: the same senders on a bare node:http collector that parses, checks, answers 202.
      const bare = await ctx.spawn({
        name: 'bare collector',
        cwd: BENCH_DIR,
        script: 'bare-collector.ts',
        readyPath: '/healthz',
        env: {},
      });
      const floor = await senders(ctx, bare.url, 'bare');
      await bare.stop();
      result.floor = { perSecond: floor.perSecond, acceptP50: floor.acceptP50, acceptP99: floor.acceptP99 };
      log(
        `  log: /e bare collector floor ${int(floor.perSecond)} events/s, p50 ${floor.acceptP50.toFixed(1)} ms, p99 ${floor.acceptP99.toFixed(1)} ms`,
      );

      const drainingWriter = await writer(1);
      result.sendersSharingCores = await senders(ctx, logApi.url, 'lsnc');
      log(
        `  log: /e ${result.sendersSharingCores.senders} senders p99 ${result.sendersSharingCores.acceptP99.toFixed(1)} ms (1 writer and PostgreSQL on the same cores)`,
      );
      // Every event the senders got a 202 for (timed and warm-up rounds) is stored once drained.
      const sent = [result.senders, result.sendersSharingCores];
      await waitStored(ctx, spareIds, 'lsnd', result.senders.accepted + result.senders.warm);
      await waitStored(ctx, spareIds, 'lsnc', result.sendersSharingCores.accepted + result.sendersSharingCores.warm);
      result.sendersStored = {
        accepted: sent.reduce((n, run) => n + run.accepted + run.warm, 0),
        stored: (await countLike(ctx, spareIds, 'lsnd')) + (await countLike(ctx, spareIds, 'lsnc')),
      };
      // (3) Lag from 202 to readable at a moderate rate (8 senders, 20 events, 20 ms apart), on an empty log.
      result.lag = await lag(ctx, logApi.url, (await freshMerchants(ctx, 1))[0] as SeedMerchant);
      log(`  log: lag p50 ${result.lag.p50.toFixed(1)} ms, p99 ${result.lag.p99.toFixed(1)} ms`);
      await drainingWriter.stop();

      // (4) A backlog over 4 merchants, drained by 1 writer, then (a new backlog) by 4 writers.
      const four = await freshMerchants(ctx, 4);
      const fourIds = four.map((m) => m.merchantId);
      const drain = async (writers: number, label: string) => {
        await sendBatches(logApi.url, four, label, batches, batch, concurrency);
        const w = await writer(writers);
        // Timed from the moment the writer process answers (its start-up is not drain time):
        // what it stored while starting is left out of the count.
        const started = performance.now();
        const before = await countLike(ctx, fourIds, label);
        await waitStored(ctx, fourIds, label, total);
        const perSecond = (total - before) / ((performance.now() - started) / 1000);
        await w.stop();
        return perSecond;
      };
      const one = await drain(1, 'lw1');
      const fourWriters = await drain(4, 'lw4');
      result.writers = { merchants: four.length, events: total, one, four: fourWriters, ratio: fourWriters / one };
      log(`  log: backlog drain 1 writer ${int(one)}/s, 4 writers ${int(fourWriters)}/s`);
    } finally {
      await logApi.stop();
      await deleteLogStream(NATS_URL, prefix).catch(() => {});
    }
    return result;
  },
  targets(result) {
    if (result.skipped) {
      return [{ what: 'log mode', target: 'runs', value: `skipped: ${result.skipped}`, met: null }];
    }
    return [
      {
        what: 'log: accepted / direct stored',
        target: '>= 1.5x',
        value: ratio(result.batched.acceptRatio),
        met: result.batched.acceptRatio >= 1.5,
      },
      {
        what: 'log: drained / direct stored',
        target: '>= 0.9x',
        value: ratio(result.batched.drainRatio),
        met: result.batched.drainRatio >= 0.9,
      },
      {
        what: 'log: drained by a writer with statistics on, until visible in them / with STATS=off, until stored (issue 55)',
        target: '>= 0.9x',
        value: ratio(result.batched.visibleStatsOnPerSecond / result.batched.drainedStatsOffPerSecond),
        met: result.batched.visibleStatsOnPerSecond / result.batched.drainedStatsOffPerSecond >= 0.9,
      },
      {
        what: 'log: /e events answered 202 are stored once drained',
        target: 'stored = accepted',
        value: `${int(result.sendersStored.stored)} / ${int(result.sendersStored.accepted)}`,
        met: result.sendersStored.stored === result.sendersStored.accepted,
      },
      {
        what: `log: /e accept p99 at ${result.senders.senders} senders (writers and PostgreSQL not on these cores)`,
        target: '< 50 ms',
        value: `${result.senders.acceptP99.toFixed(1)} ms`,
        met: result.senders.acceptP99 < 50,
      },
      {
        what: `log: /e accept p99 of a bare node:http collector (parse, check, 202), same ${result.senders.senders} senders: the floor`,
        target: '< 50 ms (else the target above is out of reach here)',
        value: `${result.floor.acceptP99.toFixed(1)} ms (ours ${ratio(result.senders.acceptP99 / result.floor.acceptP99)})`,
        met: result.floor.acceptP99 < 50,
      },
    ];
  },
  report(result) {
    if (result.skipped) return ['## Log mode ingestion', '', `Skipped: ${result.skipped}.`, ''];
    const { batched: b, senders: s, lag: l, writers: w } = result;
    return [
      `## Log mode ingestion (NATS JetStream): ${int(b.events)} events in batches of ${b.batch}, ${b.concurrency} concurrent`,
      '',
      '| path | events/s | against direct stored |',
      '|---|---|---|',
      `| direct: POST /v1/collect until stored (group commit) | ${int(b.directStoredPerSecond)} | 1.00x |`,
      `| log: POST /v1/collect until every 202 (accepted, durable in JetStream) | ${int(b.acceptedPerSecond)} | ${ratio(b.acceptRatio)} |`,
      `| log: until every event stored (1 writer process draining meanwhile) | ${int(b.drainedPerSecond)} | ${ratio(b.drainRatio)} |`,
      `| log: drained by a writer of ROLE=all with STATS=off (the write path alone) | ${int(b.drainedStatsOffPerSecond)} | ${ratio(b.drainedStatsOffPerSecond / b.directStoredPerSecond)} |`,
      `| log: the same with statistics on (chDB in the writer), until stored (${int(b.statsBacklog)} events not yet sent to them at that clock's stop) | ${int(b.drainedStatsOnPerSecond)} | ${ratio(b.drainedStatsOnPerSecond / b.directStoredPerSecond)} |`,
      `| log: the same, until the writer's statistics count every event (${ratio(b.visibleStatsOnPerSecond / b.drainedStatsOffPerSecond)} of STATS=off: the target's row) | ${int(b.visibleStatsOnPerSecond)} | ${ratio(b.visibleStatsOnPerSecond / b.directStoredPerSecond)} |`,
      '',
      `POST /e in log mode (writers stopped while timed), ${s.senders} senders x ${s.batch} events, ${s.seconds.toFixed(1)} s: ${int(s.perSecond)} events/s accepted, accept p50 ${s.acceptP50.toFixed(1)} ms, p99 ${s.acceptP99.toFixed(1)} ms, refused (503) ${s.refused}, failed ${s.failed}.`,
      '',
      '| POST /e, same senders | events/s | p50 | p99 |',
      '|---|---|---|---|',
      `| log mode (ours), writers elsewhere (stopped here) | ${int(s.perSecond)} | ${s.acceptP50.toFixed(1)} ms | ${s.acceptP99.toFixed(1)} ms |`,
      `| log mode (ours), 1 writer and PostgreSQL draining on the same 2 cores | ${int(result.sendersSharingCores.perSecond)} | ${result.sendersSharingCores.acceptP50.toFixed(1)} ms | ${result.sendersSharingCores.acceptP99.toFixed(1)} ms |`,
      `| bare node:http collector (read, JSON.parse, shape check, 202, nothing stored) | ${int(result.floor.perSecond)} | ${result.floor.acceptP50.toFixed(1)} ms | ${result.floor.acceptP99.toFixed(1)} ms |`,
      `| ours (writers elsewhere) / floor | ${ratio(s.perSecond / result.floor.perSecond)} | ${ratio(s.acceptP50 / result.floor.acceptP50)} | ${ratio(s.acceptP99 / result.floor.acceptP99)} |`,
      '',
      `Every event of both runs answered 202 was stored once the writer drained the backlog: ${int(result.sendersStored.stored)} of ${int(result.sendersStored.accepted)}.`,
      '',
      `Lag from 202 to readable (8 senders x 20 events every 20 ms; a poller reads seq > last every 5 ms): p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms over ${int(l.samples)} events.`,
      '',
      `Backlog of ${int(w.events)} events over ${w.merchants} merchants: 1 writer ${int(w.one)} events/s, 4 writers ${int(w.four)} events/s (${ratio(w.ratio)}).`,
      '',
      `JetStream settings: ${Object.entries(result.settings)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
      '',
    ];
  },
};

const noSenders: LogResult['senders'] = {
  warm: 0,
  senders: 0,
  batch: 0,
  seconds: 0,
  accepted: 0,
  refused: 0,
  failed: 0,
  perSecond: Number.NaN,
  acceptP50: Number.NaN,
  acceptP99: Number.NaN,
};

/** 64 closed-loop senders x 20 events on `POST /e` of the collector host at `url`. */
async function senders(ctx: BenchContext, url: string, prefix: string): Promise<LogResult['senders']> {
  return runSenders({
    url,
    host: `${ctx.partner.record.name}.${ctx.partner.domain}`,
    tagId: ctx.spareMerchant.tagId,
    prefix,
    senders: ctx.settings.quick ? 16 : 64,
    seconds: ctx.settings.durationSeconds,
  });
}

async function lag(ctx: BenchContext, url: string, merchant: SeedMerchant): Promise<LogResult['lag']> {
  const accepted = new Map<string, number>();
  const readable = new Map<string, number>();
  const [start] =
    await ctx.raw`select coalesce(max(seq), 0)::bigint as s from events where merchant_id = ${merchant.merchantId}`;
  let last = BigInt(start?.s ?? 0);
  let polling = true;
  let stopBy = Number.POSITIVE_INFINITY;
  const poller = (async () => {
    while (polling || readable.size < accepted.size) {
      const rows =
        await ctx.raw`select id, seq from events where merchant_id = ${merchant.merchantId} and seq > ${String(last)}::bigint order by seq`;
      const now = performance.now();
      for (const row of rows) {
        readable.set(String(row.id), now);
        last = BigInt(row.seq);
      }
      if (!polling && Date.now() > stopBy) break;
      await sleep(5);
    }
  })();
  const seconds = Math.min(5, ctx.settings.durationSeconds);
  const deadline = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < deadline) {
        const events = Array.from({ length: 20 }, () => ({ id: `llag-${++n}`, event_name: 'PageView' }));
        const res = await request(`${url}/v1/collect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ tagId: merchant.tagId, events }),
        });
        const at = performance.now();
        if (res.status === 202) for (const e of events) accepted.set(e.id, at);
        await sleep(20);
      }
    }),
  );
  stopBy = Date.now() + 30_000;
  polling = false;
  await poller;
  const lags: number[] = [];
  for (const [id, at] of accepted) {
    const seen = readable.get(id);
    if (seen !== undefined) lags.push(Math.max(0, seen - at));
  }
  return { samples: lags.length, p50: quantile(lags, 0.5), p99: quantile(lags, 0.99), max: Math.max(...lags) };
}
