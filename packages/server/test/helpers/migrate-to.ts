import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { type Database, MIGRATIONS_DIR } from '../../src/db/client.js';
import * as schema from '../../src/db/schema/index.js';

/**
 * A database migrated up to `lastTag` (a journal tag, e.g. `0027_stat_rollups`), on the suite's
 * database kind (TEST_DATABASE_URL: a fresh database on that server; else an in-memory PGlite).
 * `finish()` applies the remaining migrations, as a deployment would on a populated database.
 */
export interface PartlyMigrated {
  db: Database;
  finish(): Promise<void>;
  close(): Promise<void>;
}

/** A copy of the migrations folder whose journal ends at `lastTag`. */
function foldersUpTo(lastTag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
  fs.cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  const journalFile = path.join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const end = journal.entries.findIndex((entry) => entry.tag === lastTag);
  if (end < 0) throw new Error(`no migration ${lastTag}`);
  journal.entries = journal.entries.slice(0, end + 1);
  fs.writeFileSync(journalFile, JSON.stringify(journal));
  return dir;
}

export async function migratedUpTo(lastTag: string): Promise<PartlyMigrated> {
  const partial = foldersUpTo(lastTag);
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    const client = new PGlite();
    await client.waitReady;
    const db = drizzle({ client, schema });
    await migrate(db, { migrationsFolder: partial });
    return {
      db: db as unknown as Database,
      finish: () => migrate(db, { migrationsFolder: MIGRATIONS_DIR }),
      close: async () => {
        await client.close();
        fs.rmSync(partial, { recursive: true, force: true });
      },
    };
  }
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const name = `${decodeURIComponent(new URL(url).pathname.slice(1)).slice(0, 40)}_m${randomBytes(4).toString('hex')}`;
  const adminSql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  await adminSql.unsafe(`create database ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  const client = postgres(target.toString(), { max: 2, onnotice: () => {} });
  const db = drizzle({ client, schema });
  await migrate(db, { migrationsFolder: partial });
  return {
    db: db as unknown as Database,
    finish: () => migrate(db, { migrationsFolder: MIGRATIONS_DIR }),
    close: async () => {
      await client.end({ timeout: 2 });
      await adminSql.unsafe(`drop database if exists ${name} with (force)`);
      await adminSql.end({ timeout: 2 });
      fs.rmSync(partial, { recursive: true, force: true });
    },
  };
}
