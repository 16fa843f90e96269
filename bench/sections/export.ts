/**
 * export: `GET /v1/partners/events/export` of one merchant's events (NDJSON, read as fast as the
 * bench can) against `COPY (SELECT ...) TO STDOUT` of the same rows in the same run, and the API
 * process's resident memory while it streams (sampled from /proc every 50 ms).
 */
import fs from 'node:fs';
import http from 'node:http';
import postgres from 'postgres';
import type { BenchContext } from '../lib/context.js';
import { log } from '../lib/log.js';
import type { SeedMerchant } from '../lib/seed.js';
import { int, ratio, since } from '../lib/stats.js';
import type { Section } from './types.js';

interface ExportRun {
  events: number;
  seconds: number;
  perSecond: number;
  bytes: number;
}

export interface ExportResult {
  merchantEvents: number;
  /** The API run of the pair whose ratio is the median. */
  api: ExportRun;
  /** The COPY run of that pair. */
  copy: ExportRun;
  /** API events/s over COPY rows/s: the median of the pairs' ratios. */
  ratio: number;
  /** Every pair's ratio, in order (COPY then API, back to back). */
  pairRatios: number[];
  /** RSS before the first export. */
  rssBeforeMb: number;
  /** The highest RSS seen over every export. */
  rssPeakMb: number;
  /** The largest growth during one export (its peak over the RSS just before it). */
  rssGrowthMb: number;
  /** Each export's growth (peak during it over the RSS just before it), in order. */
  rssGrowthsMb: number[];
  /** RSS after the last export: against `rssBeforeMb`, what the exports left behind. */
  rssAfterMb: number;
  /** The final line's `complete` and `count` agreed with the lines received. */
  complete: boolean;
  error?: string;
}

const RATE_TARGET = 0.5;
const RSS_TARGET_MB = 64;
/** COPY-then-API pairs; one pair alone moved 0.45-0.54x between runs of the same code. */
const PAIRS = 3;

function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function copyRun(ctx: BenchContext, merchant: SeedMerchant): Promise<ExportRun> {
  // A client of its own per COPY: on a reused connection postgres.js's COPY readable can stop
  // short of its end (porsager/postgres#917; seen here: the second 3.7 MB COPY on one pool hung).
  const sql = postgres(ctx.url, { max: 1, onnotice: () => {} });
  try {
    return await copyOnce(sql, merchant);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function copyOnce(sql: postgres.Sql, merchant: SeedMerchant): Promise<ExportRun> {
  const start = process.hrtime.bigint();
  const readable = await sql
    .unsafe(
      `copy (select id, muid, event_name, to_char(event_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), raw_data, consent
      from events where merchant_id = '${merchant.merchantId}'::uuid order by event_time, id) to stdout`,
    )
    .readable();
  let bytes = 0;
  let events = 0;
  for await (const chunk of readable as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) events++;
  }
  const seconds = since(start) / 1000;
  return { events, seconds, perSecond: events / seconds, bytes };
}

async function apiRun(ctx: BenchContext, merchant: SeedMerchant) {
  const url = `${ctx.api.url}/v1/partners/events/export?merchantId=${merchant.merchantId}&sortOrder=asc`;
  const start = process.hrtime.bigint();
  return new Promise<ExportRun & { complete: boolean }>((resolve, reject) => {
    const req = http.get(url, { headers: { ...ctx.auth, 'accept-encoding': 'identity' }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => reject(new Error(`export: ${res.statusCode} ${body.slice(0, 300)}`)));
        return;
      }
      let bytes = 0;
      let lines = 0;
      let tail = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        // Keep the end of the stream for the final line.
        tail = (tail + chunk.subarray(Math.max(0, chunk.length - 512)).toString()).slice(-512);
      });
      res.on('end', () => {
        const seconds = since(start) / 1000;
        const last = tail.trimEnd().split('\n').pop() ?? '';
        let complete = false;
        try {
          const final = JSON.parse(last) as { complete?: boolean; count?: number };
          complete = final.complete === true && final.count === lines - 1;
        } catch {
          complete = false;
        }
        const events = lines - 1;
        resolve({ events, seconds, perSecond: events / seconds, bytes, complete });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

export const exportSection: Section<ExportResult> = {
  title: 'Export',
  async run(ctx) {
    await ctx.seedTo(Math.floor(ctx.settings.largeEvents / ctx.merchants.length), 'seed (large)');
    const merchant = ctx.merchants[0] as SeedMerchant;
    const pid = ctx.api.process.pid;
    // Warm the cache alike for both: one COPY first, not timed.
    await copyRun(ctx, merchant);
    const rssBeforeMb = rssMb(pid);
    let rssPeakMb = rssBeforeMb;
    // The peak of the export under way (reset before each): the target is the growth during one.
    let exportPeakMb = rssBeforeMb;
    const sampler = setInterval(() => {
      const now = rssMb(pid);
      rssPeakMb = Math.max(rssPeakMb, now);
      exportPeakMb = Math.max(exportPeakMb, now);
    }, 50);
    const failed: ExportRun = { events: 0, seconds: Number.NaN, perSecond: Number.NaN, bytes: 0 };
    const result: ExportResult = {
      merchantEvents: ctx.perMerchant(),
      api: failed,
      copy: failed,
      ratio: Number.NaN,
      pairRatios: [],
      rssBeforeMb,
      rssPeakMb,
      rssGrowthMb: Number.NaN,
      rssGrowthsMb: [],
      rssAfterMb: Number.NaN,
      complete: false,
    };
    try {
      const pairs: Array<{ api: ExportRun; copy: ExportRun; ratio: number }> = [];
      let complete = true;
      for (let pair = 0; pair < PAIRS; pair++) {
        const copy = await copyRun(ctx, merchant);
        const before = rssMb(pid);
        exportPeakMb = before;
        const { complete: whole, ...api } = await apiRun(ctx, merchant);
        result.rssGrowthsMb.push(Math.max(exportPeakMb, rssMb(pid)) - before);
        complete &&= whole && api.events === copy.events;
        pairs.push({ api, copy, ratio: api.perSecond / copy.perSecond });
      }
      result.pairRatios = pairs.map((p) => p.ratio);
      const median = [...pairs].sort((a, b) => a.ratio - b.ratio)[
        Math.floor(pairs.length / 2)
      ] as (typeof pairs)[number];
      result.api = median.api;
      result.copy = median.copy;
      result.ratio = median.ratio;
      result.complete = complete;
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
      log(`bench: export failed: ${result.error}`);
    } finally {
      clearInterval(sampler);
    }
    result.rssAfterMb = rssMb(pid);
    result.rssPeakMb = Math.max(rssPeakMb, result.rssAfterMb);
    result.rssGrowthMb = result.rssGrowthsMb.length > 0 ? Math.max(...result.rssGrowthsMb) : Number.NaN;
    log(
      `  export: API ${int(result.api.perSecond)} events/s, COPY ${int(result.copy.perSecond)} rows/s (median of ${PAIRS} pairs ${ratio(result.ratio)}: ${result.pairRatios.map(ratio).join(', ')}), RSS +${result.rssGrowthMb.toFixed(1)} MB`,
    );
    return result;
  },
  targets(result) {
    return [
      {
        what: `export of ${int(result.merchantEvents)} events: API / COPY rate`,
        target: `>= ${RATE_TARGET}x`,
        value: ratio(result.ratio),
        met: result.ratio >= RATE_TARGET && result.complete,
      },
      {
        what: 'export: server RSS growth during one export (the largest of the pairs)',
        target: `< ${RSS_TARGET_MB} MB`,
        value: `${result.rssGrowthMb.toFixed(1)} MB`,
        met: !result.error && result.rssGrowthMb < RSS_TARGET_MB,
      },
    ];
  },
  report(result) {
    return [
      `## GET /v1/partners/events/export of one merchant (${int(result.merchantEvents)} events) against COPY`,
      '',
      `The median of ${PAIRS} pairs (COPY, then the API, back to back); every pair's API / COPY: ${result.pairRatios.map(ratio).join(', ')}.`,
      '',
      '| path | events | seconds | events/s | MB sent | against COPY |',
      '|---|---|---|---|---|---|',
      `| API export (NDJSON, identity encoding) | ${result.error ? `failed: ${result.error.replace(/\|/g, '/')}` : int(result.api.events)} | ${result.api.seconds.toFixed(2)} | ${int(result.api.perSecond)} | ${(result.api.bytes / 2 ** 20).toFixed(1)} | ${ratio(result.ratio)} |`,
      `| \`COPY (SELECT same columns ... ORDER BY event_time, id) TO STDOUT\` | ${int(result.copy.events)} | ${result.copy.seconds.toFixed(2)} | ${int(result.copy.perSecond)} | ${(result.copy.bytes / 2 ** 20).toFixed(1)} | 1.00x |`,
      '',
      `API server RSS: growth during each export (its peak over the RSS just before it) ${result.rssGrowthsMb.map((mb) => `+${mb.toFixed(1)} MB`).join(', ')}; ${result.rssBeforeMb.toFixed(1)} MB before the first, ${result.rssPeakMb.toFixed(1)} MB peak, ${result.rssAfterMb.toFixed(1)} MB after the last. Complete (every export's final line's count = lines received = COPY rows): ${result.complete ? 'yes' : '**no**'}.`,
      '',
    ];
  },
};
