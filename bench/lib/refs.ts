/**
 * Another git ref's server beside this tree's: its worktree (installed from the pnpm store), its
 * production entry and a fresh database of its own on the bench's PostgreSQL, onboarded with that
 * ref's own CLI. The load and ingestion sections' baselines.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import type { Child } from './children.js';
import { prepareStatsDir, statsDatabaseOf } from './clickhouse.js';
import { type BenchContext, freshDataDir } from './context.js';
import { log } from './log.js';

export type Side = 'current' | 'baseline';

/** A run's stamp for the names of its databases and domains: `yyyymmdd_hhmmss`. */
export const runStamp = () =>
  new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '_').toLowerCase();
/** Merchants (each with a tag) the load section's spread row collects over. */
export const SPREAD_MERCHANTS = 100;

export const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** The baseline's worktree, `/tmp/wt-<sha>` (made and installed from the pnpm store when missing). */
export function worktreeFor(repo: string, ref: string): { dir: string; sha: string } {
  const sha = git(repo, 'rev-parse', '--verify', `${ref}^{commit}`);
  const dir = `/tmp/wt-${sha.slice(0, 7)}`;
  if (!existsSync(path.join(dir, 'packages/server/src/main.ts'))) {
    log(`bench: git worktree add ${dir} ${sha.slice(0, 7)}`);
    git(repo, 'worktree', 'add', '--detach', dir, sha);
  }
  if (!existsSync(path.join(dir, 'packages/server/node_modules'))) {
    log(`bench: pnpm install --offline --frozen-lockfile in ${dir}`);
    execFileSync('pnpm', ['install', '--offline', '--frozen-lockfile'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return { dir, sha };
}

/**
 * The entry a tree's `pnpm start` runs: `dist/main.js` (built with `tsup --silent` unless `built`,
 * as its start script does) when the start script runs the build, else `src/main.ts`; always
 * `src/main.ts` with --load-from-sources (as `pnpm loadtest` runs the server).
 */
function productionEntry(serverDir: string, built: boolean, fromSources: boolean): string {
  if (fromSources) return 'src/main.ts';
  const pkg = JSON.parse(readFileSync(path.join(serverDir, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  if (!pkg.scripts?.start?.includes('dist/main.js')) return 'src/main.ts';
  if (!built) {
    log(`bench: building ${serverDir} (tsup)`);
    execFileSync('pnpm', ['exec', 'tsup', '--silent'], { cwd: serverDir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return 'dist/main.js';
}

export interface Target {
  side: Side;
  server: Child;
  /** --load-processes N: N - 1 more API processes of the same tree on the same database. */
  extra: Child[];
  apiKey: string;
  hotMerchantId: string;
  /** tagIds[0] is the hot merchant's tag; all of them are the spread row's. */
  tagIds: string[];
  /** The merchants in creation order (tagIds[i] is merchantIds[i]'s tag). */
  merchantIds: string[];
  /** The server's own database. */
  databaseUrl: string;
  dropDatabase(): Promise<void>;
}

export async function startTarget(
  ctx: BenchContext,
  side: Side,
  serverDir: string,
  stamp: string,
  /** The working tree's server, already built by run.ts. */
  built = false,
  /**
   * Names the database, processes and domain; merchants (each with a tag) and API processes to
   * start; `env`: more settings of the server's.
   */
  options: { section: string; merchants: number; processes: number; env?: Record<string, string> } = {
    section: 'load',
    merchants: SPREAD_MERCHANTS,
    processes: ctx.settings.loadProcesses,
  },
): Promise<Target> {
  const { section } = options;
  // A fresh database per server, beside the bench's own (same PostgreSQL server).
  const dbName = `bench_${section}_${stamp}_${side}`;
  const at = (name: string) => {
    const u = new URL(ctx.url);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const admin = postgres(at('postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  const url = at(dbName);
  const dropDatabase = async () => {
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end({ timeout: 5 });
  };
  try {
    const env = {
      DATABASE_URL: url,
      NODE_ENV: 'production',
      LOG_LEVEL: 'error',
      DB_POOL_MAX: String(ctx.settings.poolMax),
      // As `pnpm loadtest`: rate limits far above the run (0 meant "none" only in later versions).
      RATE_LIMIT_PER_MINUTE: '100000000',
      COLLECT_RATE_LIMIT_PER_MINUTE: '100000000',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '100000000',
      // Collector volume quotas off (older refs ignore these names).
      COLLECT_TAG_EVENTS_PER_MINUTE: '0',
      COLLECT_TAG_BYTES_PER_MINUTE: '0',
      COLLECT_TAG_EVENTS_PER_DAY: '0',
      COLLECT_TAG_BYTES_PER_DAY: '0',
      COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
      TAG_TARGET_HOST: 'tags.partner-tags.example',
      WEBHOOK_DELIVERY: 'off',
      TAG_MONITOR: 'off',
      ...options.env,
    };
    // Each process a DATA_DIR of its own: since ce17cd7 the statistics live in chDB there, which
    // one process at a time can open (older refs use it only without DATABASE_URL).
    const dataDir = async () => {
      const dir = freshDataDir(`${section}-${side}`);
      if (existsSync(path.join(serverDir, 'src/db/clickhouse'))) {
        await prepareStatsDir(dir, statsDatabaseOf(url), { loaded: true });
      }
      return { DATA_DIR: dir };
    };
    // The tree's own server (which migrates its database on start), run as that tree's `pnpm start`
    // runs it in production: the compiled build where it has one (`node dist/main.js`, whose hot
    // lists skip the sources-only output check), else from its sources through tsx (129bee5).
    const script = productionEntry(serverDir, built, ctx.settings.loadFromSources);
    const server = await ctx.spawn({
      name: `${section} ${side} server`,
      cwd: serverDir,
      script,
      readyPath: '/healthz',
      env: { ...env, ...(await dataDir()) },
    });
    log(`${section}: ${side} server pid ${server.process.pid} from ${serverDir}`);
    // The tree's own onboarding CLI (the key format may differ between refs).
    const domain = `${section}-${side}-${stamp.slice(-6).toLowerCase()}.partner-bench.com`;
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'onboard', '--name', `${section} ${side}`, '--domain', domain, '--json'],
      { cwd: serverDir, env: { ...process.env, ...env }, encoding: 'utf8' },
    );
    const line = out.split('\n').find((l) => l.startsWith('{"'));
    if (!line) throw new Error(`${section}: onboarding in ${serverDir} printed no JSON:\n${out}`);
    const apiKey = (JSON.parse(line) as { apiKey: string }).apiKey;
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${server.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${section} setup ${p} on ${side}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, string>;
    };
    const tagIds: string[] = [];
    const merchantIds: string[] = [];
    let hotMerchantId = '';
    for (let i = 0; i < options.merchants; i++) {
      const { merchantId } = (await post('/v1/partners/merchant', { name: `Load merchant ${i}` })) as {
        merchantId: string;
      };
      const tag = await post('/v1/partners/tag/generate', { merchantId, domain });
      if (i === 0) hotMerchantId = merchantId;
      merchantIds.push(merchantId);
      tagIds.push(tag.tagId as string);
    }
    // --load-processes: more API processes on the same database (started once it is migrated); the
    // connections are split between them, as behind a load balancer.
    const extra: Child[] = [];
    for (let i = 1; i < options.processes; i++) {
      const more = await ctx.spawn({
        name: `${section} ${side} server ${i + 1}`,
        cwd: serverDir,
        script,
        readyPath: '/healthz',
        env: { ...env, ...(await dataDir()) },
      });
      log(`${section}: ${side} server ${i + 1} pid ${more.process.pid}`);
      extra.push(more);
    }
    // The mix's tag generate posts the partner's domain (an existing tag: answered, nothing new).
    return { side, server, extra, apiKey, hotMerchantId, tagIds, merchantIds, databaseUrl: url, dropDatabase };
  } catch (error) {
    await dropDatabase().catch(() => {});
    throw error;
  }
}
