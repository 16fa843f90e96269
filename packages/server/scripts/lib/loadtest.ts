import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { openDatabase } from '../../src/db/client.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { type ServerProcess, spawnServer, uniquePartnerDomain } from '../../src/testing/index.js';
import { createScratchDatabase, postgresAnswers } from '../../src/testing/services.js';

export interface LoadtestOptions {
  durationSeconds: number;
  connections: number;
  warmupSeconds: number;
  /** `postgres`: a scratch database on 127.0.0.1:5432 (TEST_DATABASE_URL's server when set); `pglite`: a temp data dir. */
  database: 'postgres' | 'pglite';
}

export interface LoadtestReport {
  database: string;
  durationSeconds: number;
  connections: number;
  requests: number;
  throughputPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  rssMb: { start: number; end: number; peak: number; changePercent: number; everyFiveSeconds: number[] };
  /** Live heap after each full GC during the measured run (from --trace-gc): flat = no leak. */
  liveHeapAfterFullGcMb: number[];
  mix: Record<string, number>;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

/**
 * Mixed reads and writes against a real server process on loopback (autocannon): per cycle of
 * ten requests per connection, 3 merchant lists, 2 event lists, 3 collector batches (5 events
 * each), 1 merchant create and 1 tag generate. Rate limits are raised for the run. The server's
 * RSS is read from /proc after the warm-up (start), every second (peak) and at the end.
 */
export async function runLoadtest(options: LoadtestOptions): Promise<LoadtestReport> {
  const usePostgres = options.database === 'postgres' && (await postgresAnswers());
  let cleanup = async () => {};
  let env: Record<string, string>;
  let apiKey: string;
  let partnerDomain: string;
  const onboard = async (database: Awaited<ReturnType<typeof openDatabase>>) => {
    const domain = uniquePartnerDomain();
    const partner = await onboardPartner(database.db, { name: 'Load', domain }, 'tags.partner-tags.example');
    return { apiKey: partner.apiKey, domain };
  };
  if (usePostgres) {
    const scratch = await createScratchDatabase('loadtest');
    cleanup = scratch.drop;
    const database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 1 });
    try {
      ({ apiKey, domain: partnerDomain } = await onboard(database));
    } finally {
      await database.close();
    }
    env = { DATABASE_URL: scratch.url };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loadtest-'));
    cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
    const database = await openDatabase({ kind: 'pglite', dataDir: dir, lockOwner: 'loadtest setup' });
    try {
      ({ apiKey, domain: partnerDomain } = await onboard(database));
    } finally {
      await database.close();
    }
    env = { DATA_DIR: dir };
  }

  let server: ServerProcess | undefined;
  try {
    server = await spawnServer({
      env: {
        ...env,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '100000000',
        COLLECT_RATE_LIMIT_PER_MINUTE: '100000000',
        AUTH_FAILURE_LIMIT_PER_MINUTE: '100000000',
        // Collector volume quotas off: one tag takes the whole run.
        COLLECT_TAG_EVENTS_PER_MINUTE: '0',
        COLLECT_TAG_BYTES_PER_MINUTE: '0',
        COLLECT_TAG_EVENTS_PER_DAY: '0',
        COLLECT_TAG_BYTES_PER_DAY: '0',
        COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
        TAG_TARGET_HOST: 'tags.partner-tags.example',
      },
      // The server logs every GC: the live heap after each full (mark-compact) GC tells a leak
      // (growing live heap) from a heap that is still sizing itself (growing RSS, flat live heap).
      nodeArgs: ['--trace-gc'],
    });
    const base = server.url;
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${base}${p}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`setup ${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, string>;
    };
    const { merchantId } = (await post('/v1/partners/merchant', { name: 'Load merchant' })) as { merchantId: string };
    const tag = await post('/v1/partners/tag/generate', { merchantId, domain: partnerDomain });
    const tagId = tag.tagId as string;

    const mix: Record<string, number> = {};
    const count = (name: string) => {
      mix[name] = (mix[name] ?? 0) + 1;
    };
    const counted = <T>(name: string, request: T): T => {
      count(name);
      return request;
    };
    const list = {
      method: 'GET' as const,
      path: '/v1/partners/merchant?limit=20',
      headers: auth,
      setupRequest: (r: object) => counted('GET merchants', r),
    };
    const events = {
      method: 'GET' as const,
      path: `/v1/partners/events?merchantId=${merchantId}&limit=50`,
      headers: auth,
      setupRequest: (r: object) => counted('GET events', r),
    };
    const collect = {
      method: 'POST' as const,
      path: '/v1/collect',
      headers: { 'content-type': 'application/json' },
      setupRequest: (r: object) => {
        count('POST collect (5 events)');
        const batch = Array.from({ length: 5 }, () => ({
          id: randomUUID(),
          event_name: 'page_view',
          data: { path: '/p' },
        }));
        return { ...r, body: JSON.stringify({ tagId, events: batch }) };
      },
    };
    const create = {
      method: 'POST' as const,
      path: '/v1/partners/merchant',
      headers: auth,
      setupRequest: (r: object) => {
        count('POST merchant');
        return { ...r, headers: { ...auth, 'idempotency-key': randomUUID() }, body: JSON.stringify({ name: 'Load' }) };
      },
    };
    const generate = {
      method: 'POST' as const,
      path: '/v1/partners/tag/generate',
      headers: auth,
      setupRequest: (r: object) =>
        counted('POST tag/generate', { ...r, body: JSON.stringify({ merchantId, domain: partnerDomain }) }),
    };
    const requests = [list, collect, events, list, collect, create, events, collect, list, generate];

    const fire = (seconds: number) =>
      autocannon({ url: base, connections: options.connections, duration: seconds, requests, timeout: 10 });

    if (options.warmupSeconds > 0) await fire(options.warmupSeconds);
    for (const key of Object.keys(mix)) delete mix[key];
    const pid = server.child.pid as number;
    const outputAtStart = server.output().length;
    const start = rssMb(pid);
    let peak = start;
    const series: number[] = [];
    let ticks = 0;
    const sampler = setInterval(() => {
      try {
        const now = rssMb(pid);
        peak = Math.max(peak, now);
        ticks += 1;
        if (ticks % 5 === 0) series.push(now);
      } catch {}
    }, 1000);
    const result = await fire(options.durationSeconds);
    clearInterval(sampler);
    const end = rssMb(pid);
    // `[pid:isolate] ... Mark-Compact <before> (<size>) -> <after> (<size>) MB`; the main isolate is the
    // one with the largest heap (tsx's loader thread has its own, small one).
    const byIsolate = new Map<string, number[]>();
    for (const line of server.output().slice(outputAtStart).split('\n')) {
      const match = /^\[\d+:(0x[0-9a-f]+)\].*Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \(/.exec(line);
      if (match?.[1] && match[2]) byIsolate.set(match[1], [...(byIsolate.get(match[1]) ?? []), Number(match[2])]);
    }
    const liveAfterFullGc = [...byIsolate.values()].sort((a, b) => Math.max(...b) - Math.max(...a))[0] ?? [];
    peak = Math.max(peak, end);
    return {
      database: usePostgres ? 'postgres' : 'pglite',
      durationSeconds: options.durationSeconds,
      connections: options.connections,
      requests: result.requests.total,
      throughputPerSecond: Math.round(result.requests.average),
      latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      liveHeapAfterFullGcMb: liveAfterFullGc,
      rssMb: {
        start,
        end,
        peak,
        changePercent: Math.round(((end - start) / start) * 1000) / 10,
        everyFiveSeconds: series,
      },
      mix,
    };
  } finally {
    server?.kill('SIGTERM');
    await server?.exited;
    await cleanup();
  }
}
