/**
 * lists: `GET /v1/partners/events` against the same statements as raw SQL over postgres.js and
 * against the bare node:http server (bare-server.ts) running them; at the small scale, then grown
 * to the large one (growth), with EXPLAIN ANALYZE of every shape.
 */

import { PartnerClient } from '@partner/sdk';
import { encodeCursor, eventListQueries, type ListEventsParams } from '@partner/server/bench';
import ky from 'ky';
import {
  BENCH_CURSOR_KEY,
  BENCH_CURSOR_SECRET,
  BENCH_DIR,
  type BenchContext,
  type SeedFigures,
} from '../lib/context.js';
import { cpuPerRequest, processCpuMs } from '../lib/cpu.js';
import { request } from '../lib/http.js';
import { log } from '../lib/log.js';
import { type SeedMerchant, windowEnd } from '../lib/seed.js';
import { int, type Latency, latency, ms, quantile, ratio, since } from '../lib/stats.js';
import { mark, type Section, type TargetCheck } from './types.js';

const DAY_MS = 86_400_000;
const ymd = (instant: number) => new Date(instant).toISOString().slice(0, 10);

type ShapeKind = 'shallow' | 'offset' | 'cursor';

interface Shape {
  key: string;
  label: string;
  kind: ShapeKind;
  params: (merchantId: string) => ListEventsParams;
  /** Runs before the shape is measured at a scale (the cursor shape makes its cursors). */
  prepare?: (ctx: BenchContext) => Promise<void>;
}

/** The deep cursor page: page 10,000 of 100 when a merchant holds 1M events (the last page). */
const CURSOR_PAGE = 10_000;
const deepCursors = new Map<string, { cursor: string; page: number }>();

/**
 * Makes, for every merchant, the cursor a client holds after walking to page min(10,000, last):
 * the key of the last row before that page, signed as the server signs it (same key).
 */
async function prepareDeepCursors(ctx: BenchContext): Promise<void> {
  deepCursors.clear();
  const page = Math.max(2, Math.min(CURSOR_PAGE, Math.floor(ctx.perMerchant() / 100)));
  for (const merchant of ctx.merchants) {
    const [row] = await ctx.raw`select id, to_char(event_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as t
      from events where merchant_id = ${merchant.merchantId}::uuid
      order by event_time desc, id desc offset ${(page - 1) * 100 - 1} limit 1`;
    if (!row) throw new Error('deep cursor: the merchant has too few events');
    const { binding } = eventListQueries(ctx.partner.partnerId, base(merchant.merchantId), BENCH_CURSOR_KEY);
    deepCursors.set(merchant.merchantId, {
      page,
      cursor: encodeCursor(BENCH_CURSOR_KEY, binding, { page, time: String(row.t), id: String(row.id) }),
    });
  }
}

const base = (merchantId: string): ListEventsParams => ({
  merchantId,
  page: 1,
  limit: 100,
  sortOrder: 'desc',
  sortBy: 'event_time',
});

const SHAPES: Shape[] = [
  { key: 'page1', label: 'page 1, limit 100, default sort', kind: 'shallow', params: base },
  {
    key: 'names30d',
    label: 'PageView,Purchase + 30-day range',
    kind: 'shallow',
    params: (id) => ({
      ...base(id),
      events: 'PageView,Purchase',
      startDate: ymd(windowEnd() - 30 * DAY_MS),
      endDate: ymd(windowEnd() - DAY_MS),
    }),
  },
  {
    key: 'byName',
    label: 'sortBy=event_name',
    kind: 'shallow',
    params: (id) => ({ ...base(id), sortBy: 'event_name' }),
  },
  {
    key: 'page1000',
    label: 'page 1000, limit 100 (offset)',
    kind: 'offset',
    params: (id) => ({ ...base(id), page: 1000 }),
  },
  {
    key: 'cursor10000',
    label: 'cursor page 10,000, limit 100',
    kind: 'cursor',
    prepare: prepareDeepCursors,
    params: (id) => ({ ...base(id), cursor: deepCursors.get(id)?.cursor }),
  },
];

interface ShapeResult {
  key: string;
  label: string;
  kind: ShapeKind;
  api: Latency;
  raw: Latency;
  bare: Latency;
  /** The framework floor (framework-server.ts): tRPC + trpc-to-openapi and the statements, nothing else. */
  framework: Latency;
  apiOverBare: number;
  frameworkOverBare: number;
  apiOverRaw: number;
  /** Server CPU (user + system) per request over the shape's requests, µs; null without /proc. */
  apiCpuUs: number | null;
  bareCpuUs: number | null;
  frameworkCpuUs: number | null;
  totalItems: number;
  rows: number;
}

interface ScaleResult {
  events: number;
  seed: SeedFigures | null;
  shapes: ShapeResult[];
  /** EXPLAIN (ANALYZE, BUFFERS) of each shape's statements on the first merchant. */
  plans: Record<string, string>;
}

interface SdkIteration {
  events: number;
  pageSize: number;
  /**
   * Median seconds of `for await` over `client.events.list(...)` (follows nextCursor), with the
   * SDK's defaults: the next page is asked for while the current one's items are used.
   */
  sdkSeconds: number;
  /** The same with `prefetchPages: false`: each page asked for once the items before it are used up. */
  sequentialSeconds: number;
  /** Median seconds of the same pages with bare `fetch` + `JSON.parse`, following nextCursor. */
  bareSeconds: number;
  /**
   * Median seconds of the same pages through ky alone (`ky(url).text()` + `JSON.parse`, its
   * defaults but `retry: 0`): the floor of any SDK built on ky, as the SDK's definition requires.
   */
  kySeconds: number;
  /** sdk / bare - 1 (the median of the rounds' ratios): what the SDK adds. */
  overhead: number;
  /** The quartiles (25th, 75th percentile) of the rounds' sdk / bare - 1: how far one round is from another. */
  overheadQuartiles: [number, number];
  /** sdk without fetching ahead / bare - 1 (median of the rounds' ratios). */
  sequentialOverhead: number;
  /** ky / bare - 1 (median of the rounds' ratios): what ky alone adds. */
  kyOverhead: number;
  /** sdk / ky - 1 (median of the rounds' ratios): what the SDK adds on top of ky (its own code). */
  overKy: number;
  /** Every round's seconds, in round order (the order of the four paths turns each round). */
  rounds: { sdk: number[]; sequential: number[]; bare: number[]; ky: number[] };
  /**
   * The bench process's CPU (user + system) per path, median ms over the rounds: what each path
   * costs the client, which the machine's drift between rounds moves far less than the seconds.
   */
  clientCpuMs: { sdk: number; sequential: number; bare: number; ky: number };
}

export interface ListsResult {
  small: ScaleResult;
  large: ScaleResult;
  sdk: SdkIteration;
}

const SDK_TARGET = 0.05;

/** `0.123` as `12.3% more`, `-0.05` as `5.0% less`. */
function percentMore(share: number): string {
  return share < 0 ? `${(-share * 100).toFixed(1)}% less` : `${(share * 100).toFixed(1)}% more`;
}

/** The median of `a[i] / b[i]` over the rounds. */
function ratioQuantile(a: number[], b: number[], q: number): number {
  return quantile(
    a.map((value, i) => value / (b[i] as number)),
    q,
  );
}

const medianRatio = (a: number[], b: number[]) => ratioQuantile(a, b, 0.5);

/**
 * Timed rounds of the SDK section: a multiple of the four paths, so each path runs as often in
 * each place of the turning order. One round's SDK / bare moved by 10-30% from the next (9 rounds
 * until 2026-11-26: the median of so few moved as much as the 5% it is held to).
 */
const SDK_ROUNDS = 20;
const SDK_ROUNDS_QUICK = 4;

/** 10k events of one merchant: the SDK's for-await against bare fetch + JSON.parse of the same pages. */
async function measureSdk(ctx: BenchContext): Promise<SdkIteration> {
  const merchant = ctx.merchants[0] as SeedMerchant;
  const events = Math.min(10_000, ctx.perMerchant());
  const pageSize = 100;
  const options = { apiKey: ctx.partner.apiKey, baseURL: ctx.api.url, maxRetries: 0 };
  const client = new PartnerClient(options);
  const sequentialClient = new PartnerClient({ ...options, prefetchPages: false });
  const iterate = async (sdkClient: PartnerClient) => {
    const start = process.hrtime.bigint();
    let n = 0;
    for await (const _event of sdkClient.events.list({ merchantId: merchant.merchantId, limit: pageSize })) {
      if (++n >= events) break;
    }
    return since(start) / 1000;
  };
  const viaSdk = () => iterate(client);
  const viaSequentialSdk = () => iterate(sequentialClient);
  /** The same pages by nextCursor, each page's body read as text by `read` and JSON-parsed here. */
  const walk = async (read: (url: string) => Promise<string>) => {
    const start = process.hrtime.bigint();
    let n = 0;
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({ merchantId: merchant.merchantId, limit: String(pageSize) });
      if (cursor) query.set('cursor', cursor);
      const body = JSON.parse(await read(`${ctx.api.url}/v1/partners/events?${query}`)) as {
        events: unknown[];
        pagination: { nextCursor: string | null };
      };
      n += body.events.length;
      cursor = body.pagination.nextCursor;
    } while (cursor && n < events);
    return since(start) / 1000;
  };
  const viaFetch = () => walk(async (url) => (await fetch(url, { headers: ctx.auth })).text());
  const viaKy = () => walk((url) => ky(url, { headers: ctx.auth, retry: 0 }).text());
  const sdk: number[] = [];
  const sequential: number[] = [];
  const bare: number[] = [];
  const viaKySeconds: number[] = [];
  const cpu = new Map<number[], number[]>([
    [sdk, []],
    [sequential, []],
    [bare, []],
    [viaKySeconds, []],
  ]);
  // The order turns every round: a path pays for part of the garbage the path before it left
  // (run in one fixed order, ky alone once came out 6% faster than bare fetch).
  const paths: Array<[() => Promise<number>, number[]]> = [
    [viaSdk, sdk],
    [viaFetch, bare],
    [viaKy, viaKySeconds],
    [viaSequentialSdk, sequential],
  ];
  // Between two paths (untimed): the SDK's loop ends with the page after the last one it uses
  // asked for and aborted, which the server may still be answering; the next path must not pay for it.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 25));
  // Warm-up: the first rounds of every path run slower (seen: 0.34 s, then 0.31 s, then 0.23 s).
  for (let round = 0; round < 2; round++) {
    for (const [run] of paths) {
      await run();
      await settle();
    }
  }
  for (let round = 0; round < (ctx.settings.quick ? SDK_ROUNDS_QUICK : SDK_ROUNDS); round++) {
    for (let i = 0; i < paths.length; i++) {
      const [run, into] = paths[(round + i) % paths.length] as [() => Promise<number>, number[]];
      const before = process.cpuUsage();
      into.push(await run());
      const used = process.cpuUsage(before);
      cpu.get(into)?.push((used.user + used.system) / 1000);
      await settle();
    }
  }
  const sdkSeconds = quantile(sdk, 0.5);
  const sequentialSeconds = quantile(sequential, 0.5);
  const bareSeconds = quantile(bare, 0.5);
  const kySeconds = quantile(viaKySeconds, 0.5);
  log(
    `  lists: SDK for-await ${events} events ${sdkSeconds.toFixed(2)} s (not fetching ahead ${sequentialSeconds.toFixed(2)} s), bare fetch ${bareSeconds.toFixed(2)} s, ky alone ${kySeconds.toFixed(2)} s`,
  );
  return {
    events,
    pageSize,
    sdkSeconds,
    sequentialSeconds,
    bareSeconds,
    kySeconds,
    // Ratios of the same round (paths of one round run back to back), then their median: the
    // machine's drift between rounds cancels out.
    overhead: medianRatio(sdk, bare) - 1,
    overheadQuartiles: [ratioQuantile(sdk, bare, 0.25) - 1, ratioQuantile(sdk, bare, 0.75) - 1],
    sequentialOverhead: medianRatio(sequential, bare) - 1,
    kyOverhead: medianRatio(viaKySeconds, bare) - 1,
    overKy: medianRatio(sdk, viaKySeconds) - 1,
    rounds: { sdk, sequential, bare, ky: viaKySeconds },
    clientCpuMs: {
      sdk: quantile(cpu.get(sdk) ?? [], 0.5),
      sequential: quantile(cpu.get(sequential) ?? [], 0.5),
      bare: quantile(cpu.get(bare) ?? [], 0.5),
      ky: quantile(cpu.get(viaKySeconds) ?? [], 0.5),
    },
  };
}

function queryString(params: ListEventsParams | Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  return search.toString();
}

interface Target {
  url: string;
  headers: Record<string, string>;
  /** The server process (its CPU time per request is reported). */
  pid: number | undefined;
}

async function timedGet(target: Target, path: string): Promise<{ ms: number; body: string }> {
  const start = process.hrtime.bigint();
  const res = await request(`${target.url}${path}`, { headers: target.headers });
  const elapsed = since(start);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return { ms: elapsed, body: res.body };
}

async function measureShape(ctx: BenchContext, bare: Target, framework: Target, shape: Shape): Promise<ShapeResult> {
  const api: Target = { url: ctx.api.url, headers: ctx.auth, pid: ctx.api.process.pid };
  const cpuBefore = {
    api: processCpuMs(api.pid),
    bare: processCpuMs(bare.pid),
    framework: processCpuMs(framework.pid),
  };
  const samples = { api: [] as number[], raw: [] as number[], bare: [] as number[], framework: [] as number[] };
  const reps = ctx.settings.reps;
  const warmup = Math.max(3, Math.floor(reps / 10));
  let totalItems = 0;
  let rows = 0;
  for (let i = 0; i < reps + warmup; i++) {
    const merchant = ctx.merchants[i % ctx.merchants.length] as SeedMerchant;
    const params = shape.params(merchant.merchantId);
    const path = `/v1/partners/events?${queryString(params)}`;
    // API, bare and raw alternate request by request, so load from elsewhere hits all alike.
    const fromApi = await timedGet(api, path);
    const fromBare = await timedGet(bare, path);
    const fromFramework = await timedGet(framework, path);
    const queries = eventListQueries(ctx.partner.partnerId, params, BENCH_CURSOR_KEY);
    const start = process.hrtime.bigint();
    // Prepared, as the server sends them.
    const [data, count] = await Promise.all([
      ctx.raw.unsafe(queries.data.sql, queries.data.params as never[], { prepare: true }),
      ctx.raw.unsafe(queries.count.sql, queries.count.params as never[], { prepare: true }),
    ]);
    const rawMs = since(start);
    if (i >= warmup) {
      samples.api.push(fromApi.ms);
      samples.bare.push(fromBare.ms);
      samples.framework.push(fromFramework.ms);
      samples.raw.push(rawMs);
    }
    const body = JSON.parse(fromApi.body) as { events: unknown[]; pagination: { totalItems: number } };
    const bareBody = JSON.parse(fromBare.body) as { events: unknown[] };
    if (
      // The data statement reads one row past the page (to know a next page exists).
      body.events.length !== Math.min(data.length, params.limit) ||
      bareBody.events.length !== body.events.length ||
      fromFramework.body !== fromBare.body ||
      body.pagination.totalItems !== Number(count[0]?.total)
    ) {
      throw new Error(`events ${shape.key}: the API, the bare server and the raw SQL disagree`);
    }
    totalItems = body.pagination.totalItems;
    rows = body.events.length;
  }
  const requests = reps + warmup;
  const apiCpuUs = cpuPerRequest(cpuBefore.api, processCpuMs(api.pid), requests);
  const bareCpuUs = cpuPerRequest(cpuBefore.bare, processCpuMs(bare.pid), requests);
  const frameworkCpuUs = cpuPerRequest(cpuBefore.framework, processCpuMs(framework.pid), requests);
  const a = latency(samples.api);
  const r = latency(samples.raw);
  const b = latency(samples.bare);
  const f = latency(samples.framework);
  return {
    key: shape.key,
    label: shape.label,
    kind: shape.kind,
    api: a,
    raw: r,
    bare: b,
    framework: f,
    apiOverBare: a.p50 / b.p50,
    frameworkOverBare: f.p50 / b.p50,
    apiOverRaw: a.p50 / r.p50,
    apiCpuUs,
    bareCpuUs,
    frameworkCpuUs,
    totalItems,
    rows,
  };
}

async function explainShapes(ctx: BenchContext, scale: string): Promise<Record<string, string>> {
  const plans: Record<string, string> = {};
  const first = ctx.merchants[0] as SeedMerchant;
  for (const shape of SHAPES) {
    const queries = eventListQueries(ctx.partner.partnerId, shape.params(first.merchantId), BENCH_CURSOR_KEY);
    for (const [part, q] of [
      ['data', queries.data],
      ['count', queries.count],
    ] as const) {
      const lines = await ctx.raw.unsafe(`explain (analyze, buffers, costs off) ${q.sql}`, q.params as never[]);
      plans[`${scale} ${shape.key} ${part}`] = lines.map((row) => String(row['QUERY PLAN'])).join('\n');
    }
  }
  return plans;
}

async function measureScale(
  ctx: BenchContext,
  bare: Target,
  framework: Target,
  scale: string,
): Promise<ScaleResult['shapes']> {
  const out: ShapeResult[] = [];
  for (const shape of SHAPES) {
    await shape.prepare?.(ctx);
    const result = await measureShape(ctx, bare, framework, shape);
    out.push(result);
    log(
      `  lists ${scale} ${shape.label}: API ${ms(result.api.p50)}, bare ${ms(result.bare.p50)}, raw ${ms(result.raw.p50)} (API/bare ${ratio(result.apiOverBare)}, framework floor/bare ${ratio(result.frameworkOverBare)}); server CPU per request API ${int(result.apiCpuUs ?? Number.NaN)} µs, framework floor ${int(result.frameworkCpuUs ?? Number.NaN)} µs, bare ${int(result.bareCpuUs ?? Number.NaN)} µs`,
    );
  }
  return out;
}

/** The bare node:http baseline server on the bench database, for the bench's partner. */
export function startBare(ctx: BenchContext) {
  return startBaseline(ctx, 'bare server', 'bare-server.ts');
}

/** `framework-server.ts`: the stack the API is built on (tRPC + trpc-to-openapi), with the API's own request path taken out. */
export function startFramework(ctx: BenchContext) {
  return startBaseline(ctx, 'framework floor server', 'framework-server.ts');
}

/** A baseline server of bench/ on the bench database, serving the bench's partner. */
function startBaseline(ctx: BenchContext, name: string, script: string) {
  return ctx.spawn({
    name,
    cwd: BENCH_DIR,
    script,
    readyPath: '/healthz',
    env: {
      DATABASE_URL: ctx.url,
      PARTNER_ID: ctx.partner.partnerId,
      DB_POOL_MAX: String(ctx.settings.poolMax),
      CURSOR_SECRET: BENCH_CURSOR_SECRET,
    },
  });
}

const SHALLOW_TARGET = 1.15;
const OFFSET_TARGET = 1.5;
const GROWTH_TARGET = 2;
const CURSOR_TARGET = 1.2;

export const lists: Section<ListsResult> = {
  title: 'Event list',
  async run(ctx) {
    const bareChild = await startBare(ctx);
    const bare: Target = { url: bareChild.url, headers: {}, pid: bareChild.process.pid };
    const frameworkChild = await startFramework(ctx);
    const framework: Target = { url: frameworkChild.url, headers: {}, pid: frameworkChild.process.pid };
    try {
      const { settings } = ctx;
      const perSmall = Math.floor(settings.smallEvents / ctx.merchants.length);
      const perLarge = Math.floor(settings.largeEvents / ctx.merchants.length);
      const seedSmall = await ctx.seedTo(perSmall, 'seed (small)');
      const small: ScaleResult = {
        events: ctx.perMerchant() * ctx.merchants.length,
        seed: seedSmall,
        shapes: await measureScale(ctx, bare, framework, 'small'),
        plans: await explainShapes(ctx, 'small'),
      };
      const seedLarge = await ctx.seedTo(perLarge, 'seed (large)');
      const large: ScaleResult = {
        events: ctx.perMerchant() * ctx.merchants.length,
        seed: seedLarge,
        shapes: await measureScale(ctx, bare, framework, 'large'),
        plans: await explainShapes(ctx, 'large'),
      };
      return { small, large, sdk: await measureSdk(ctx) };
    } finally {
      await frameworkChild.stop();
      await bareChild.stop();
    }
  },
  targets(result) {
    const checks: TargetCheck[] = [];
    for (const shape of result.large.shapes) {
      if (shape.kind === 'shallow') {
        checks.push({
          what: `event list, ${shape.label}: API / bare server (p50)`,
          target: `<= ${SHALLOW_TARGET}x`,
          value: ratio(shape.apiOverBare),
          met: shape.apiOverBare <= SHALLOW_TARGET,
        });
      } else if (shape.kind === 'cursor') {
        const first = result.large.shapes.find((s) => s.key === 'page1');
        const deep = first ? shape.api.p50 / first.api.p50 : Number.NaN;
        checks.push({
          what: `event list, ${shape.label}: API p50 / page 1 API p50`,
          target: `<= ${CURSOR_TARGET}x`,
          value: ratio(deep),
          met: deep <= CURSOR_TARGET,
        });
      } else {
        checks.push({
          what: `event list, ${shape.label}: API / raw (p50)`,
          target: `<= ${OFFSET_TARGET}x`,
          value: ratio(shape.apiOverRaw),
          met: shape.apiOverRaw <= OFFSET_TARGET,
        });
      }
    }
    checks.push({
      what: `SDK for-await over ${int(result.sdk.events)} events against bare fetch + JSON.parse`,
      target: `< ${SDK_TARGET * 100}% more`,
      value: `${(result.sdk.overhead * 100).toFixed(1)}%`,
      met: result.sdk.overhead < SDK_TARGET,
    });
    checks.push({
      what: `(the floor of the row above) ky alone over the same pages against bare fetch + JSON.parse`,
      target: `< ${SDK_TARGET * 100}% more (else the row above is out of reach with ky)`,
      value: `${(result.sdk.kyOverhead * 100).toFixed(1)}% (the SDK over ky: ${(result.sdk.overKy * 100).toFixed(1)}%)`,
      met: result.sdk.kyOverhead < SDK_TARGET,
    });
    checks.push({
      what: `(no target) the SDK not fetching ahead (\`prefetchPages: false\`) against bare fetch + JSON.parse`,
      target: '-',
      value: `${(result.sdk.sequentialOverhead * 100).toFixed(1)}%`,
      met: null,
    });
    for (const big of result.large.shapes) {
      const little = result.small.shapes.find((s) => s.key === big.key);
      if (!little || big.kind !== 'shallow') continue;
      const growth = big.api.p50 / little.api.p50;
      checks.push({
        what: `growth ${int(result.small.events)} -> ${int(result.large.events)}, ${big.label} (API p50)`,
        target: `<= ${GROWTH_TARGET}x`,
        value: ratio(growth),
        met: growth <= GROWTH_TARGET,
      });
    }
    return checks;
  },
  report(result) {
    const lines: string[] = [];
    const { large, small } = result;
    lines.push(
      `## GET /v1/partners/events against the bare server and the raw SQL (${int(large.events)} events)`,
      '',
      '| shape | rows | totalItems | API p50 | API p95 | bare p50 | framework floor p50 | raw p50 | API / bare | framework floor / bare | API / raw | server CPU per request, API / framework floor / bare | target | met |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of large.shapes) {
      const page1 = large.shapes.find((s) => s.key === 'page1');
      const deep = page1 ? r.api.p50 / page1.api.p50 : Number.NaN;
      const target =
        r.kind === 'cursor'
          ? `API / page-1 API <= ${CURSOR_TARGET}x: ${ratio(deep)}`
          : r.kind === 'shallow'
            ? `API / bare <= ${SHALLOW_TARGET}x`
            : `API / raw <= ${OFFSET_TARGET}x`;
      const met =
        r.kind === 'cursor'
          ? deep <= CURSOR_TARGET
          : r.kind === 'shallow'
            ? r.apiOverBare <= SHALLOW_TARGET
            : r.apiOverRaw <= OFFSET_TARGET;
      lines.push(
        `| ${r.label} | ${r.rows} | ${int(r.totalItems)} | ${ms(r.api.p50)} | ${ms(r.api.p95)} | ${ms(r.bare.p50)} | ${ms(r.framework.p50)} | ${ms(r.raw.p50)} | ${ratio(r.apiOverBare)} | ${ratio(r.frameworkOverBare)} | ${ratio(r.apiOverRaw)} | ${cpuPair(r)} | ${target} | ${mark(met)} |`,
      );
    }
    lines.push(
      '',
      'bare: `bench/bare-server.ts`, a node:http server sending the same two statements over postgres.js (prepared) and writing the same JSON, without authentication, validation, framework or logging; the honest floor for an HTTP API. framework floor: `bench/framework-server.ts`, the same statements and JSON behind a tRPC procedure with the same input schema served by trpc-to-openapi (the stack the API is built on), and nothing else. raw: the statements alone from the bench process. API, bare, framework floor and raw alternate request by request. Server CPU per request: user + system time of each server process over the shape (warm-up included), from /proc.',
      '',
      `### Growth: ${int(small.events)} against ${int(large.events)} events (API p50)`,
      '',
      '| shape | API p50 small | API p50 large | large / small | raw large / small | target | met |',
      '|---|---|---|---|---|---|---|',
    );
    for (const big of large.shapes) {
      const little = small.shapes.find((s) => s.key === big.key);
      if (!little) continue;
      const growth = big.api.p50 / little.api.p50;
      const shallow = big.kind === 'shallow';
      lines.push(
        `| ${big.label} | ${ms(little.api.p50)} | ${ms(big.api.p50)} | ${ratio(growth)} | ${ratio(big.raw.p50 / little.raw.p50)} | ${shallow ? `<= ${GROWTH_TARGET}x` : '(none: past the end at the small scale)'} | ${shallow ? mark(growth <= GROWTH_TARGET) : '-'} |`,
      );
    }
    const { sdk } = result;
    lines.push(
      '',
      `### The SDK: \`for await\` over ${int(sdk.events)} events (pages of ${sdk.pageSize}, by nextCursor)`,
      '',
      '| path | seconds (median) | against bare (median of the per-round ratios) |',
      '|---|---|---|',
      `| @partner/sdk \`client.events.list(...)\` for await (its default: the next page asked for ahead) | ${sdk.sdkSeconds.toFixed(3)} | ${percentMore(sdk.overhead)} (target < ${SDK_TARGET * 100}%: ${mark(sdk.overhead < SDK_TARGET)}; the rounds' quartiles ${(sdk.overheadQuartiles[0] * 100).toFixed(1)}% and ${(sdk.overheadQuartiles[1] * 100).toFixed(1)}%) |`,
      `| the same with \`prefetchPages: false\` (a page asked for once the items before it are used) | ${sdk.sequentialSeconds.toFixed(3)} | ${percentMore(sdk.sequentialOverhead)} |`,
      `| ky alone (\`ky(url, { retry: 0 }).text()\` + \`JSON.parse\`), same pages | ${sdk.kySeconds.toFixed(3)} | ${(sdk.kyOverhead * 100).toFixed(1)}% more (the SDK over it: ${(sdk.overKy * 100).toFixed(1)}%) |`,
      `| bare \`fetch\` + \`JSON.parse\`, same pages | ${sdk.bareSeconds.toFixed(3)} | |`,
      '',
      "ky alone is the floor of an SDK built on ky (the SDK's definition): per request it builds a `Request` (twice with `prefixUrl`), clones it for retries, and joins an `AbortController` for its timeout. The SDK's default asks for the next page as soon as a page arrives (at most one ahead), so its own work and the caller's overlap the server's; `prefetchPages: false` shows the same loop one page at a time, as the bare and ky loops run. The four paths alternate, their order turning every round, with 25 ms (untimed) between two paths.",
      '',
      `Every round (s): SDK ${sdk.rounds.sdk.map((v) => v.toFixed(3)).join(', ')}; SDK not fetching ahead ${sdk.rounds.sequential.map((v) => v.toFixed(3)).join(', ')}; bare fetch ${sdk.rounds.bare.map((v) => v.toFixed(3)).join(', ')}; ky alone ${sdk.rounds.ky.map((v) => v.toFixed(3)).join(', ')}.`,
      '',
      `The bench process's CPU per path (user + system, median over the rounds): SDK ${sdk.clientCpuMs.sdk.toFixed(1)} ms, SDK not fetching ahead ${sdk.clientCpuMs.sequential.toFixed(1)} ms, bare fetch ${sdk.clientCpuMs.bare.toFixed(1)} ms, ky alone ${sdk.clientCpuMs.ky.toFixed(1)} ms.`,
    );
    lines.push('', '### Query plans (EXPLAIN ANALYZE, first merchant)', '');
    for (const [name, plan] of Object.entries({ ...small.plans, ...large.plans })) {
      lines.push(`<details><summary>${name}</summary>`, '', '```', plan, '```', '', '</details>', '');
    }
    return lines;
  },
};

function cpuPair(r: ShapeResult): string {
  if (r.apiCpuUs === null || r.bareCpuUs === null || r.frameworkCpuUs === null) return 'n/a';
  return `${int(r.apiCpuUs)} / ${int(r.frameworkCpuUs)} / ${int(r.bareCpuUs)} µs`;
}
