import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { DEADLINE_MARGIN_MS } from './deadline.js';
import { acquireLock } from './lock.js';
import * as schema from './schema/index.js';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  db: Database;
  driver: 'postgres' | 'pglite';
  /** Names this database's statistics. */
  statsName: string;
  /** Resolves when the database answers a trivial query within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  /** postgres.js: connections by state and queries waiting for one; PGlite: undefined. */
  poolStats?(): { busy: number; idle: number; connecting: number; closed: number; waiting: number };
  /**
   * LISTENs on a channel: `onPayload` runs for each notification. postgres.js holds one dedicated connection for it
   * and re-listens after a reconnect, calling `onListen` each time; PGlite delivers in-process.
   */
  listen(channel: string, onPayload: (payload: string) => void, onListen?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

interface DeadlineOptions {
  /** statement_timeout of pooled connections (ms); the client deadline adds DEADLINE_MARGIN_MS. Default 5000. */
  statementTimeoutMs?: number;
  /** statement_timeout of the migrations' connection (ms). Default 300000. */
  migrationTimeoutMs?: number;
}

export type DatabaseOptions =
  | ({ kind: 'postgres'; url: string; maxConnections?: number } & DeadlineOptions)
  /** `dataDir` undefined: in memory (tests). Otherwise a directory, guarded by a lock file. */
  | { kind: 'pglite'; dataDir?: string; lockOwner?: string; loadDataDir?: Blob };

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));
const MIGRATION_LOCK_KEY = 7_316_402_011;
const PREPARE_MAX_CHARS = 8_000;
const PREPARE_MAX_PARAMS = 200;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** TCP keepalive idle time of every connection (s): finds a peer gone while a connection is idle. */
const KEEPALIVE_SECONDS = 10;

type Postgres = typeof import('postgres');

/** A postgres.js pool with the deadlines, keepalive and statement cache every pool of ours has. */
function openPool(
  postgres: Postgres,
  url: string,
  maxConnections: number,
  statementTimeoutMs: number,
  applicationName: string,
): ReturnType<Postgres> {
  const client = postgres(url, {
    max: maxConnections,
    idle_timeout: 30,
    connect_timeout: 2,
    // Reconnect attempts after a failure, capped low: postgres.js's default backoff grows so long that
    // a database back from an outage stayed unused.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    onnotice: () => {},
    keep_alive: KEEPALIVE_SECONDS,
    // Names this process's connections in pg_stat_activity; every statement ends within statement_timeout. JIT off:
    // the planner misjudges a claim's LATERAL limit and compiles it (docs/decisions/database-access.md).
    connection: { application_name: applicationName, statement_timeout: statementTimeoutMs, jit: 'off' },
    // The client-side deadline (patched postgres.js): also covers a connection that went silent.
    query_timeout: statementTimeoutMs + DEADLINE_MARGIN_MS,
  });
  // drizzle sends every query as an unnamed statement, so PostgreSQL parses and plans it on every call. postgres.js
  // caches named statements per connection by query text.
  const unsafe = client.unsafe.bind(client);
  client.unsafe = ((query: string, params?: unknown[], options?: Record<string, unknown>) => {
    // `prepare` listed before the spread, then set (a key added after a spread costs fresh hidden
    // classes per call on Node 20: context.ts).
    const settings = { prepare: false, ...options };
    settings.prepare = query.length <= PREPARE_MAX_CHARS && (params?.length ?? 0) <= PREPARE_MAX_PARAMS;
    return unsafe(query, params as never, settings);
  }) as typeof client.unsafe;
  return client;
}

/** `pg_` and the URL's database name, as a ClickHouse identifier. */
function statsNameOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
  return `pg_${name.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, 63);
}

async function openPostgres(
  url: string,
  maxConnections: number,
  { statementTimeoutMs = 5_000, migrationTimeoutMs = 300_000 }: DeadlineOptions = {},
): Promise<DatabaseHandle> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');

  // Migrations run on one dedicated connection under an advisory lock, so several processes
  // starting on one database apply them once.
  const migrationClient = postgres(url, {
    max: 1,
    onnotice: () => {},
    connect_timeout: 10,
    keep_alive: KEEPALIVE_SECONDS,
    connection: { statement_timeout: migrationTimeoutMs },
    query_timeout: migrationTimeoutMs + DEADLINE_MARGIN_MS,
  });
  try {
    await migrationClient`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    await migrate(drizzle({ client: migrationClient }), { migrationsFolder: MIGRATIONS_DIR });
    await migrationClient`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
  } finally {
    await migrationClient.end({ timeout: 5 });
  }

  const client = openPool(postgres, url, maxConnections, statementTimeoutMs, `partner-tags:${process.pid}`);
  const db = drizzle({ client, schema }) as unknown as Database;
  return {
    db,
    driver: 'postgres',
    statsName: statsNameOf(url),
    ping: async (timeoutMs = 2000) => {
      await withTimeout(client`select 1`, timeoutMs, 'database ping');
    },
    poolStats: () => client.poolStats(),
    listen: async (channel, onPayload, onListen) => {
      const { unlisten } = await client.listen(channel, onPayload, onListen);
      return unlisten;
    },
    close: () => client.end({ timeout: 5 }),
  };
}

async function openPglite(dataDir: string | undefined, lockOwner: string, loadDataDir?: Blob): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');

  let release = () => {};
  let storeDir: string | undefined;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    release = acquireLock(path.join(dataDir, 'pglite.lock'), lockOwner);
    storeDir = path.join(dataDir, 'pglite');
  }
  try {
    const client = storeDir ? new PGlite(storeDir) : new PGlite(loadDataDir ? { loadDataDir } : {});
    await client.waitReady;
    const db = drizzle({ client, schema });
    await migrate(db, { migrationsFolder: MIGRATIONS_DIR });
    return {
      db: db as unknown as Database,
      driver: 'pglite',
      statsName: dataDir ? 'partner_tags' : `mem_${randomBytes(6).toString('hex')}`,
      ping: async (timeoutMs = 2000) => {
        await withTimeout(db.execute(sql`select 1`), timeoutMs, 'database ping');
      },
      listen: (channel, onPayload) => client.listen(channel, onPayload),
      close: async () => {
        try {
          await client.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** Opens the database and applies pending migrations: postgres.js with a URL, PGlite otherwise. */
export function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.kind === 'postgres'
    ? openPostgres(options.url, options.maxConnections ?? 10, options)
    : openPglite(options.dataDir, options.lockOwner ?? 'a process', options.loadDataDir);
}

/** A streaming replica's pool: read-only, never migrated (the primary's migrations reach it through the WAL). */
export interface ReplicaHandle {
  db: Database;
  close(): Promise<void>;
}

/** Opens a pool on a PostgreSQL streaming replica, lazily. Its connections are named `partner-tags:<pid>:replica`. */
export async function openReadReplica(
  url: string,
  maxConnections: number,
  statementTimeoutMs = 5_000,
  name = 'replica',
): Promise<ReplicaHandle> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const client = openPool(postgres, url, maxConnections, statementTimeoutMs, `partner-tags:${process.pid}:${name}`);
  return {
    db: drizzle({ client, schema }) as unknown as Database,
    close: () => client.end({ timeout: 5 }),
  };
}
