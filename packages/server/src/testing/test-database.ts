// Per-file PostgreSQL databases for the test suite. Background jobs of one file then never claim another file's rows;
// processes a file spawns share that file's database.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openDatabase } from '../db/client.js';
import { migrationsHash } from './pglite-template.js';

/** The URL with another database name. */
function withDatabase(url: string, name: string): string {
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}

function baseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`TEST_DATABASE_URL: database name ${name} must match [a-z0-9_]+`);
  // 63 bytes at most: room for the `_f` / `_t` suffixes.
  return name.slice(0, 40);
}

async function admin<T>(url: string, run: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(withDatabase(url, 'postgres'), { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    return await run(sql);
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/** The template's name for TEST_DATABASE_URL: keyed by the migrations' contents. */
function templateDatabaseName(url: string): string {
  return `${baseName(url)}_t${migrationsHash().slice(0, 12)}`;
}

/** Creates and migrates the template database on TEST_DATABASE_URL's server unless it exists. */
export async function ensureTemplateDatabase(url: string): Promise<string> {
  const template = templateDatabaseName(url);
  const exists = await admin(url, (sql) => sql`select 1 from pg_database where datname = ${template}`);
  if (exists.length > 0) return template;
  const partial = `${baseName(url)}_p${randomBytes(4).toString('hex')}`;
  await admin(url, (sql) => sql.unsafe(`create database ${partial}`));
  try {
    const database = await openDatabase({ kind: 'postgres', url: withDatabase(url, partial), maxConnections: 1 });
    await database.close();
    await admin(url, (sql) => sql.unsafe(`alter database ${partial} rename to ${template}`));
  } catch (error) {
    await admin(url, (sql) => sql.unsafe(`drop database if exists ${partial} with (force)`));
    // A concurrent run renamed its template first: use that one.
    const raced = await admin(url, (sql) => sql`select 1 from pg_database where datname = ${template}`);
    if (raced.length === 0) throw error;
  }
  return template;
}

export interface FileDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A copy of the template for one test file (ensureTemplateDatabase first). */
export async function createFileDatabase(url: string): Promise<FileDatabase> {
  const template = await ensureTemplateDatabase(url);
  const name = `${baseName(url)}_f${randomBytes(4).toString('hex')}`;
  await admin(url, (sql) => sql.unsafe(`create database ${name} template ${template}`));
  return {
    url: withDatabase(url, name),
    drop: () => admin(url, (sql) => sql.unsafe(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}

/** Drops the template (end of the run). */
export async function dropTemplateDatabase(url: string, template: string): Promise<void> {
  await admin(url, (sql) => sql.unsafe(`drop database if exists ${template} with (force)`));
}
