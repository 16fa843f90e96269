import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clickhouse } from './client.js';

/**
 * The numbered `.sql` files of the statistics' ClickHouse schema: `./migrations` beside this file,
 * or in the bundle (`dist/*.js`, where `./migrations` holds PostgreSQL's) `./clickhouse/migrations`,
 * where tsup.config.ts copies them.
 */
export const CLICKHOUSE_MIGRATIONS_DIR = fileURLToPath(
  new URL(import.meta.url.includes('/db/clickhouse/') ? './migrations' : './clickhouse/migrations', import.meta.url),
);

/** The statements of one migration file: separated by `;` at the end of a line, comments dropped. */
export function statementsOf(text: string): string[] {
  return text
    .replace(/^\s*--.*$/gm, '')
    .split(/;\s*$/m)
    .map((statement) => statement.trim())
    .filter(Boolean);
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in file order. Every statement is
 * written to be safe twice (`IF NOT EXISTS`), so two processes starting at once on one server, or
 * a start cut between a statement and its record, end with the same schema.
 * Returns the names applied.
 */
export async function migrateClickhouse(clickhouse: Clickhouse, dir = CLICKHOUSE_MIGRATIONS_DIR): Promise<string[]> {
  await clickhouse.command(
    'CREATE TABLE IF NOT EXISTS schema_migrations (name String, applied_at DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY name',
  );
  const done = new Set(
    (await clickhouse.query<{ name: string }>('SELECT name FROM schema_migrations')).map((row) => row.name),
  );
  const applied: string[] = [];
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()) {
    const name = path.basename(file, '.sql');
    if (done.has(name)) continue;
    for (const statement of statementsOf(readFileSync(path.join(dir, file), 'utf8'))) {
      await clickhouse.command(statement, undefined, { timeoutMs: 300_000 });
    }
    await clickhouse.insert('schema_migrations', [{ name }]);
    applied.push(name);
  }
  return applied;
}
