/**
 * Writes beside the statistics, for the stats section: `POST /v1/collect` with statistics on and
 * off (issue 55's 0.9x) and with the enrichment against without (issue 52's 0.9x), and `POST /e`
 * alone and beside clients reading stats.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describeVisitor } from '@partner/server/bench';
import type { Child } from './children.js';
import { apiServer, type BenchContext, freshDataDir, removeDataDir } from './context.js';
import { request, requestJson } from './http.js';
import { log } from './log.js';
import { runSenders } from './senders.js';
import { int, type Latency, latency, ms, quantile, since } from './stats.js';
import { apiPath, type Dates, type Shape, TARGET_SHAPES } from './stats-answers.js';
import { statsEventCount, waitVisible } from './stats-visible.js';

/** Clients reading stats beside the `/e` senders. */
const READERS = 8;

export interface IngestResult {
  events: number;
  batch: number;
  concurrency: number;
  rounds: number;
  /** Statistics on: until every 202 (stored), and until the stats summary counts every event (medians). */
  onStoredPerSecond: number;
  onVisiblePerSecond: number;
  /** A STATS=off process: until stored (median). */
  offStoredPerSecond: number;
  /**
   * Issue 52's enrichment: the stats server again, until stored, every request with a user agent
   * of its own (a browser's, never seen before: parsed, checked for a bot) and an X-Forwarded-For
   * address (TRUST_PROXY=1: looked up in the country database), against the `on` runs (no user
   * agent, a loopback address: nothing parsed, nothing found). Median.
   */
  enrichedStoredPerSecond: number;
  /** The enriched runs until visible in the statistics (median), as the `on` runs. */
  enrichedVisiblePerSecond: number;
  /** Every round's events/s until stored, in round order: on, off, enriched. */
  perRound: { on: number[]; off: number[]; enriched: number[] };
  /** `describeVisitor` in the bench's process: µs per call, a user agent never seen, and one kept. */
  enrichCallMicros: { unseen: number; kept: number };
}

export interface CollectorBesideReads {
  senders: number;
  seconds: number;
  /** `/e` accept latency, each the mean over the rounds. */
  alone: { perSecond: number; p50: number; p99: number };
  beside: { perSecond: number; p50: number; p99: number };
  readers: number;
  /** The readers' requests while the senders ran (the three target shapes in turn). */
  reads: Latency & { perSecond: number };
}

/** Browsers' user agents; `{v}` a version of each request's own (so the server's kept parses never answer). */
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v} Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{v} Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v} Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{v} Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/{v}',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/{v}',
];

/** The request's client for the enrichment: a new browser user agent and a public address per `n`. */
function visitorHeaders(n: number): Record<string, string> {
  const agent = AGENTS[n % AGENTS.length] as string;
  const version = `${100 + (n % 31)}.0.${Math.floor(n / 31) % 10_000}.${n % 97}`;
  const address = `${1 + (n % 223)}.${(n * 7) % 256}.${(n * 13) % 256}.${1 + ((n * 29) % 254)}`;
  return { 'user-agent': agent.replace('{v}', version), 'x-forwarded-for': address };
}

/** `describeVisitor` per call (µs): each call a user agent never seen, then one kept (the server keeps 10,000). */
function enrichCallMicros(): { unseen: number; kept: number } {
  const calls = 20_000;
  const visitor = (n: number) => {
    const h = visitorHeaders(n);
    return { ip: h['x-forwarded-for'] as string, userAgent: h['user-agent'], country: undefined };
  };
  for (let n = 0; n < 2_000; n++) describeVisitor(visitor(1e9 + n), 'server');
  let started = process.hrtime.bigint();
  for (let n = 0; n < calls; n++) describeVisitor(visitor(2e9 + n), 'server');
  const unseen = (since(started) * 1000) / calls;
  const kept = visitor(1e9);
  started = process.hrtime.bigint();
  for (let n = 0; n < calls; n++) describeVisitor(kept, 'server');
  return { unseen, kept: (since(started) * 1000) / calls };
}

/** The next request's client (`visitorHeaders`): a user agent the server has not seen. */
let nextVisitor = 0;

/**
 * `POST /v1/collect` batches (500, 4 concurrent) to the process at `url`; resolves at the last 202.
 * `enrich`: each request with a client of its own (`visitorHeaders`).
 */
async function sendCollect(url: string, tagId: string, prefix: string, total: number, enrich = false): Promise<void> {
  const batch = 500;
  const batches = total / batch;
  const now = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let b = next++; b < batches; b = next++) {
        const events = Array.from({ length: batch }, (_, i) => {
          const n = b * batch + i;
          const purchase = i % 10 === 0;
          return {
            id: `${prefix}-${b}-${i}`,
            event_name: purchase ? 'Purchase' : 'PageView',
            event_time: new Date(now - (n % 86_400) * 1000).toISOString(),
            muid: `u${n % 5_000}`,
            data: purchase
              ? { value: (n % 100) + 0.25, currency: 'EUR' }
              : {
                  path: `/p/${n % 50}`,
                  referrer: `https://ref${n % 7}.example/x`,
                  url: `https://shop.example/p/${n % 50}?utm_source=s${n % 5}&utm_medium=m`,
                },
          };
        });
        const res = await request(`${url}/v1/collect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(enrich ? visitorHeaders(nextVisitor++) : {}) },
          body: JSON.stringify({ tagId, events }),
        });
        if (res.status !== 202) throw new Error(`collect: ${res.status} ${res.body.slice(0, 200)}`);
      }
    }),
  );
}

/**
 * The same batches to the stats server (until stored, until visible in its statistics) and to a
 * STATS=off process (until stored: the write path alone), in alternating rounds; medians.
 */
export async function measureIngest(ctx: BenchContext, server: Child): Promise<IngestResult> {
  const merchant = ctx.spareMerchant;
  const total = Math.max(1, Math.ceil(ctx.settings.ingestEvents / 500)) * 500;
  const rounds = 3;
  const offDir = freshDataDir('stats-off');
  const base = await apiServer(ctx.settings, ctx.url, 'API server, STATS=off', { dataDir: offDir });
  const off = await ctx.spawn({ ...base, env: { ...base.env, STATS: 'off' } });
  const on: number[] = [];
  const onVisible: number[] = [];
  const offStored: number[] = [];
  const enriched: number[] = [];
  const enrichedVisible: number[] = [];
  const stored = async (prefix: string) => {
    const [row] = await ctx.raw`select count(*)::int as n from events
      where merchant_id = ${merchant.merchantId}::uuid and id like ${`${prefix}-%`}`;
    if (Number(row?.n) !== total) throw new Error(`collect ${prefix}: ${row?.n} of ${total} events stored`);
  };
  // Each run from the same state: the last run's dead rows vacuumed, its pages written out.
  const settle = async () => {
    await ctx.raw`vacuum (analyze) events, event_ids, stats_outbox`;
    await ctx.raw`checkpoint`.catch(() => {});
  };
  try {
    for (let round = 0; round < rounds; round++) {
      const kinds = ['on', 'off', 'enriched'];
      for (const kind of [...kinds.slice(round % 3), ...kinds.slice(0, round % 3)]) {
        await settle();
        const prefix = `st${kind}${round}-${Date.now()}`;
        if (kind === 'on') {
          const before = await statsEventCount(server.url, ctx.auth, merchant.merchantId);
          const started = process.hrtime.bigint();
          await sendCollect(server.url, merchant.tagId, prefix, total);
          on.push(total / (since(started) / 1000));
          await waitVisible(ctx.raw, server.url, ctx.auth, merchant.merchantId, before + total);
          onVisible.push(total / (since(started) / 1000));
        } else if (kind === 'enriched') {
          // Until visible too: the next run never starts beside this one's sends to the statistics.
          const before = await statsEventCount(server.url, ctx.auth, merchant.merchantId);
          const started = process.hrtime.bigint();
          await sendCollect(server.url, merchant.tagId, prefix, total, true);
          enriched.push(total / (since(started) / 1000));
          await waitVisible(ctx.raw, server.url, ctx.auth, merchant.merchantId, before + total);
          enrichedVisible.push(total / (since(started) / 1000));
        } else {
          const started = process.hrtime.bigint();
          await sendCollect(off.url, merchant.tagId, prefix, total);
          offStored.push(total / (since(started) / 1000));
        }
        // The direct path answers 202 once stored: the count checks it, outside the clock.
        await stored(prefix);
      }
    }
  } finally {
    await off.stop();
    removeDataDir(ctx.settings, offDir);
  }
  const result = {
    events: total,
    batch: 500,
    concurrency: 4,
    rounds,
    onStoredPerSecond: quantile(on, 0.5),
    onVisiblePerSecond: quantile(onVisible, 0.5),
    offStoredPerSecond: quantile(offStored, 0.5),
    enrichedStoredPerSecond: quantile(enriched, 0.5),
    enrichedVisiblePerSecond: quantile(enrichedVisible, 0.5),
    perRound: { on, off: offStored, enriched },
    enrichCallMicros: enrichCallMicros(),
  };
  log(
    `  stats ingest: statistics on ${int(result.onStoredPerSecond)}/s stored, ${int(result.onVisiblePerSecond)}/s visible; off ${int(result.offStoredPerSecond)}/s stored; enriched ${int(result.enrichedStoredPerSecond)}/s stored (describeVisitor ${result.enrichCallMicros.unseen.toFixed(1)} µs a new user agent, ${result.enrichCallMicros.kept.toFixed(2)} µs a kept one)`,
  );
  return result;
}

/** `POST /e` senders on the stats server alone, then beside READERS clients reading the target shapes in a loop. */
export async function measureCollectorBesideReads(
  ctx: BenchContext,
  server: Child,
  d: Dates,
): Promise<CollectorBesideReads> {
  const senders = ctx.settings.quick ? 16 : 64;
  const rounds = ctx.settings.quick ? 1 : 2;
  const send = (prefix: string) =>
    runSenders({
      url: server.url,
      host: `${ctx.partner.record.name}.${ctx.partner.domain}`,
      tagId: ctx.spareMerchant.tagId,
      prefix,
      senders,
      seconds: ctx.settings.durationSeconds,
    });
  // Each reader a dashboard of its own: a merchant session (a key reads at most 2 at a time).
  const sessions = await Promise.all(
    Array.from({ length: READERS }, async (_, r) => {
      const merchantId = ctx.merchants[r % ctx.merchants.length]?.merchantId as string;
      const session = await requestJson<{ token: string }>(
        `${server.url}/v1/partners/merchant/${merchantId}/sessions`,
        {
          method: 'POST',
          headers: ctx.auth,
          body: { allowedOrigins: ['https://admin.bench.example'] },
          expect: 201,
        },
      );
      return { merchantId, auth: { authorization: `Bearer ${session.token}` } };
    }),
  );
  const alone: Awaited<ReturnType<typeof send>>[] = [];
  const beside: Awaited<ReturnType<typeof send>>[] = [];
  const reads: number[] = [];
  let readSeconds = 0;
  for (let round = 0; round < rounds; round++) {
    alone.push(await send(`esolo${round}`));
    let reading = true;
    let k = round * 7;
    const readers = Array.from({ length: READERS }, async (_, r) => {
      while (reading) {
        const i = k++ + r;
        const shape = TARGET_SHAPES[i % TARGET_SHAPES.length] as Shape;
        const { merchantId, auth } = sessions[r] as (typeof sessions)[number];
        const started = process.hrtime.bigint();
        const res = await request(`${server.url}${apiPath(shape, merchantId, d)}`, { headers: auth });
        if (res.status !== 200) throw new Error(`stats read beside /e: ${res.status} ${res.body.slice(0, 200)}`);
        if (reading) reads.push(since(started));
      }
    });
    // The readers get going before the senders' clock starts.
    await sleep(500);
    const started = process.hrtime.bigint();
    try {
      beside.push(await send(`ebeside${round}`));
    } finally {
      readSeconds += since(started) / 1000;
      reading = false;
      await Promise.all(readers);
    }
  }
  const mean = (runs: typeof alone, pick: (run: (typeof alone)[number]) => number) =>
    runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  const figures = (runs: typeof alone) => ({
    perSecond: mean(runs, (r) => r.perSecond),
    p50: mean(runs, (r) => r.acceptP50),
    p99: mean(runs, (r) => r.acceptP99),
  });
  const result = {
    senders,
    seconds: ctx.settings.durationSeconds,
    alone: figures(alone),
    beside: figures(beside),
    readers: READERS,
    reads: { ...latency(reads), perSecond: reads.length / readSeconds },
  };
  log(
    `  stats /e: p99 ${result.alone.p99.toFixed(1)} ms alone, ${result.beside.p99.toFixed(1)} ms beside ${READERS} readers (${int(result.reads.perSecond)} reads/s, p95 ${ms(result.reads.p95)})`,
  );
  return result;
}
