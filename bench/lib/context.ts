import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type OnboardedPartner, onboardPartner, openDatabase } from '@partner/server/bench';
import postgres from 'postgres';
import { type Child, startChild } from './children.js';
import { prepareStatsDir, statsDatabaseOf } from './clickhouse.js';
import type { Settings } from './config.js';
import { closeAgent, request, requestJson } from './http.js';
import { log } from './log.js';
import { type SeedMerchant, seedEvents } from './seed.js';
import { since } from './stats.js';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_DIR = path.resolve(BENCH_DIR, '../packages/server');
const TARGET_HOST = 'tags.partner-tags.example';
/** The API server, the bare server and the bench sign and read cursors with this key. */
export const BENCH_CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdef';
export const BENCH_CURSOR_KEY = Buffer.from(BENCH_CURSOR_SECRET, 'utf8');

export interface SeedFigures {
  events: number;
  seconds: number;
  vacuumSeconds: number;
}

/** What every section gets: the database, one partner, the API server, the seeded merchants. */
export interface BenchContext {
  settings: Settings;
  url: string;
  /** postgres.js on the bench database (the raw SQL baselines), pool of `settings.poolMax`. */
  raw: postgres.Sql;
  partner: OnboardedPartner;
  auth: { authorization: string };
  api: Child;
  /** The merchants holding the seeded events (every one has a tag). */
  merchants: SeedMerchant[];
  /** A merchant with a tag and no seeded events: ingestion and stream runs write there. */
  spareMerchant: SeedMerchant;
  /** Events per seeded merchant so far. */
  perMerchant(): number;
  /** Events per merchant added by each seed so far, in order (a baseline database seeded alike holds the same events). */
  seedSteps(): number[];
  /** The ClickHouse database of the bench database's statistics (`pg_<name>`, as the server names it). */
  statsDatabase: string;
  /** Adds events until every seeded merchant holds `perMerchant`; then VACUUM (ANALYZE). */
  seedTo(perMerchant: number, label: string): Promise<SeedFigures | null>;
  /** Starts another process (stopped with the context). */
  spawn(options: Parameters<typeof startChild>[0]): Promise<Child>;
  pgVersion: string;
  close(): Promise<void>;
}

/** The server's environment for bench runs: production mode, rate limits off, background jobs off, the bench's pool. */
function serverEnv(settings: Settings, url: string): Record<string, string> {
  return {
    DATABASE_URL: url,
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    DB_POOL_MAX: String(settings.poolMax),
    RATE_LIMIT_PER_MINUTE: '0',
    SESSION_RATE_LIMIT_PER_MINUTE: '0',
    COLLECT_RATE_LIMIT_PER_MINUTE: '0',
    // The collector volume quotas off: the ingestion sections send far more than a store.
    COLLECT_TAG_EVENTS_PER_MINUTE: '0',
    COLLECT_TAG_BYTES_PER_MINUTE: '0',
    COLLECT_TAG_EVENTS_PER_DAY: '0',
    COLLECT_TAG_BYTES_PER_DAY: '0',
    COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
    TAG_TARGET_HOST: TARGET_HOST,
    CURSOR_SECRET: BENCH_CURSOR_SECRET,
    // Background jobs off: only the webhooks section's own API process delivers and checks tags.
    WEBHOOK_DELIVERY: 'off',
    TAG_MONITOR: 'off',
  };
}

/** The data directories made for server processes in this run (removed at the end unless --keep). */
const dataDirs: string[] = [];

/** A fresh, empty directory under the system's temp dir for one process's DATA_DIR. */
export function freshDataDir(label = 'server'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `bench-${label.replace(/[^a-z0-9]+/gi, '-')}-`));
  dataDirs.push(dir);
  return dir;
}

/** Removes a DATA_DIR made by freshDataDir (its process stopped), unless --keep. */
export function removeDataDir(settings: Settings, dir: string): void {
  if (settings.keep) return;
  rmSync(dir, { recursive: true, force: true });
  const at = dataDirs.indexOf(dir);
  if (at >= 0) dataDirs.splice(at, 1);
}

/**
 * The API server as production runs it: the compiled build (`node dist/main.js`, built by `run.ts`
 * first), statistics on, chDB in a DATA_DIR of its own (one process per chDB directory). That
 * store is marked loaded before the start, so the process does not copy every event already in
 * PostgreSQL into it (the start-up load, features/stats/load.ts): its statistics hold what it
 * stores. `loadStored` leaves the mark out (the stats section times the load); `dataDir` is used
 * as it is (a restart, or one the caller prepared).
 */
export async function apiServer(
  settings: Settings,
  url: string,
  name = 'API server',
  options: { dataDir?: string; loadStored?: boolean } = {},
): Promise<Parameters<typeof startChild>[0]> {
  let dataDir = options.dataDir;
  if (dataDir === undefined) {
    dataDir = freshDataDir(name);
    await prepareStatsDir(dataDir, statsDatabaseOf(url), { loaded: !options.loadStored });
  }
  return {
    name,
    cwd: SERVER_DIR,
    script: 'dist/main.js',
    readyPath: '/healthz',
    env: { ...serverEnv(settings, url), DATA_DIR: dataDir },
  };
}

/**
 * A fresh `bench_<stamp>` database (or BENCH_DATABASE_URL as given), the server's migrations, one
 * partner, the API server, and `merchantCount + 1` merchants with a tag each.
 */
export async function openContext(settings: Settings, stamp: string): Promise<BenchContext> {
  const givenUrl = process.env.BENCH_DATABASE_URL;
  const dbName = `bench_${stamp.toLowerCase()}`;
  const url = givenUrl ?? `postgres://postgres@127.0.0.1:5432/${dbName}`;
  const admin = givenUrl
    ? null
    : postgres('postgres://postgres@127.0.0.1:5432/postgres', { max: 1, onnotice: () => {} });
  if (admin) await admin.unsafe(`create database ${dbName}`);
  const children: Child[] = [];
  const raw = postgres(url, { max: settings.poolMax, onnotice: () => {} });
  const seedSql = postgres(url, { max: 1, onnotice: () => {} });
  const close = async () => {
    for (const child of children.reverse()) await child.stop().catch(() => {});
    closeAgent();
    await raw.end({ timeout: 5 });
    await seedSql.end({ timeout: 5 });
    if (settings.keep && dataDirs.length > 0) log(`bench: kept the servers' data directories ${dataDirs.join(', ')}`);
    else for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    if (admin) {
      if (settings.keep) log(`bench: kept database ${dbName}`);
      else await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end({ timeout: 5 });
    }
  };
  try {
    log(
      `bench: database ${givenUrl ? url : dbName}, sections ${settings.sections.join(', ')}, pool ${settings.poolMax}`,
    );
    const handle = await openDatabase({ kind: 'postgres', url, maxConnections: 2 });
    const partner = await onboardPartner(
      handle.db,
      { name: 'Bench Partner', domain: `bench-${stamp.slice(-6)}.partner-bench.com` },
      TARGET_HOST,
    );
    await handle.close();
    const pgVersion = String((await raw`select current_setting('server_version') as v`)[0]?.v);
    const spawn = async (options: Parameters<typeof startChild>[0]) => {
      const child = await startChild(options);
      children.push(child);
      return child;
    };
    const api = await spawn(await apiServer(settings, url));
    const auth = { authorization: `Bearer ${partner.apiKey}` };
    const merchants: SeedMerchant[] = [];
    for (let i = 0; i < settings.merchantCount + 1; i++) {
      const created = await requestJson<{ merchantId: string }>(`${api.url}/v1/partners/merchant`, {
        method: 'POST',
        headers: auth,
        body: { name: `Bench merchant ${i}` },
        expect: 201,
      });
      // 201 for a new tag (200 would be an existing one): either is fine here.
      const res = await request(`${api.url}/v1/partners/tag/generate`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ merchantId: created.merchantId, domain: partner.domain }),
      });
      if (res.status >= 300) throw new Error(`tag/generate: ${res.status} ${res.body}`);
      const tag = JSON.parse(res.body) as { tagId: string };
      merchants.push({ merchantId: created.merchantId, tagId: tag.tagId });
    }
    const spareMerchant = merchants.pop() as SeedMerchant;
    let perMerchant = 0;
    const steps: number[] = [];
    return {
      settings,
      url,
      raw,
      partner,
      auth,
      api,
      merchants,
      spareMerchant,
      pgVersion,
      perMerchant: () => perMerchant,
      seedSteps: () => [...steps],
      statsDatabase: statsDatabaseOf(url),
      seedTo: async (target, label) => {
        if (target <= perMerchant) return null;
        const seeded = await seedEvents(seedSql, merchants, target - perMerchant, label, perMerchant);
        steps.push(target - perMerchant);
        perMerchant = target;
        const start = process.hrtime.bigint();
        await seedSql`vacuum (analyze) events`;
        await seedSql`vacuum (analyze) event_day_counts`;
        const vacuumSeconds = since(start) / 1000;
        log(
          `bench: ${label}: ${seeded.events.toLocaleString('en-US')} events in ${seeded.seconds.toFixed(1)} s, vacuum ${vacuumSeconds.toFixed(1)} s`,
        );
        return { ...seeded, vacuumSeconds };
      },
      spawn,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export const machine = () => ({
  cpus: os.availableParallelism(),
  memoryGb: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  /** 1-minute load average when the run started: the machine is shared. */
  loadAverage: os.loadavg()[0] ?? 0,
});
