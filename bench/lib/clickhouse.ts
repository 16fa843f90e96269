/**
 * The statistics' ClickHouse as the bench reaches it: chDB opened in the bench process at a
 * server's DATA_DIR while that server is stopped (chDB lets one process open a directory), with
 * the server's own client and migrations (`@partner/server/bench`).
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Clickhouse, migrateClickhouse, openClickhouse } from '@partner/server/bench';

export type { Clickhouse };

/** The ClickHouse database of a PostgreSQL database's statistics: `pg_<name>`, as db/client.ts names it. */
export function statsDatabaseOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
  return `pg_${name.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, 63);
}

/** chDB at `dataDir/clickhouse` (as the server opens it: statsEngineOf), the server's migrations applied. */
export async function openStatsDir(dataDir: string, database: string): Promise<Clickhouse> {
  const clickhouse = await openClickhouse({ kind: 'chdb', path: path.join(dataDir, 'clickhouse'), database });
  try {
    await migrateClickhouse(clickhouse);
    return clickhouse;
  } catch (error) {
    await clickhouse.close();
    throw error;
  }
}

/** The mark a server's start-up load writes when done (StatsStore.markLoaded): a server finding it loads nothing. */
export async function markLoaded(clickhouse: Clickhouse): Promise<void> {
  await clickhouse.insert('schema_migrations', [{ name: 'load:complete' }]);
}

/**
 * Prepares a DATA_DIR's statistics for a server of `serverDir` (its schema), marked loaded unless
 * `loaded` is false (see apiServer in context.ts).
 */
export async function prepareStatsDir(dataDir: string, database: string, options: { loaded: boolean }): Promise<void> {
  const clickhouse = await openStatsDir(dataDir, database);
  try {
    if (options.loaded) await markLoaded(clickhouse);
  } finally {
    await clickhouse.close();
  }
}

/**
 * Waits until no merge of `events` has run for 3 s (at most `timeoutMs`): the storage and the
 * timings are then of the parts a settled table has, not of a load's or a seed's small ones.
 */
export async function settleMerges(clickhouse: Clickhouse, timeoutMs: number): Promise<{ seconds: number }> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  for (let quiet = 0; quiet < 3 && Date.now() < deadline; ) {
    const [row] = await clickhouse.query<{ n: string }>(
      "SELECT count() AS n FROM system.merges WHERE database = currentDatabase() AND table = 'events'",
    );
    quiet = Number(row?.n ?? 0) === 0 ? quiet + 1 : 0;
    await sleep(1000);
  }
  return { seconds: (performance.now() - started) / 1000 };
}

export interface Storage {
  rows: number;
  parts: number;
  /** Active parts of `events` on disk (each part's projections included). */
  bytes: number;
  /** The projections (rollups) alone: `system.projection_parts`. */
  projections: Array<{ name: string; bytes: number; rows: number }>;
  /** bytes / rows per million events, in MB (2^20 bytes). */
  mbPerMillion: number;
}

/** `events`' storage: `system.parts` (active), and its projections from `system.projection_parts`. */
export async function storageOf(clickhouse: Clickhouse): Promise<Storage> {
  const [parts] = await clickhouse.query<{ bytes: string; rows: string; parts: string }>(
    `SELECT sum(bytes_on_disk) AS bytes, sum(rows) AS rows, count() AS parts FROM system.parts
     WHERE active AND database = currentDatabase() AND table = 'events'`,
  );
  const projections = await clickhouse.query<{ name: string; bytes: string; rows: string }>(
    `SELECT name, sum(bytes_on_disk) AS bytes, sum(rows) AS rows FROM system.projection_parts
     WHERE active AND database = currentDatabase() AND table = 'events' GROUP BY name ORDER BY name`,
  );
  const rows = Number(parts?.rows ?? 0);
  const bytes = Number(parts?.bytes ?? 0);
  return {
    rows,
    parts: Number(parts?.parts ?? 0),
    bytes,
    projections: projections.map((p) => ({ name: p.name, bytes: Number(p.bytes), rows: Number(p.rows) })),
    mbPerMillion: rows > 0 ? bytes / 2 ** 20 / (rows / 1e6) : Number.NaN,
  };
}
