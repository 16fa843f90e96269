import { DrizzleQueryError, type Query, SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Database } from './client.js';

export type Row = Record<string, unknown>;

interface PostgresJsClient {
  unsafe(query: string, params?: unknown[]): Promise<Row[]> & { raw(): Promise<(Buffer | null)[][]> };
}
interface PgliteClient {
  query(query: string, params?: unknown[]): Promise<{ rows: Row[] }>;
}

const dialect = new PgDialect();

/** `db.execute()` answers an array on postgres.js and `{ rows }` on PGlite: the rows either way. */
export function rowsOf<T = Row>(result: unknown): T[] {
  return (Array.isArray(result) ? result : ((result as { rows?: T[] }).rows ?? [])) as T[];
}

/** A drizzle `sql` statement as PostgreSQL text and parameters. */
export function toQuery(statement: SQL): Query {
  return dialect.sqlToQuery(statement);
}

/** Runs read-only statements of a hot path straight on the driver, skipping drizzle's session layer. */
export function readRows(db: Database, statements: (SQL | Query)[]): Promise<Row[][]> {
  const queries = statements.map((statement) => (statement instanceof SQL ? toQuery(statement) : statement));
  const client = (db as unknown as { $client: PostgresJsClient | PgliteClient }).$client;
  const wrap = (q: { sql: string; params: unknown[] }) => (cause: unknown) => {
    throw new DrizzleQueryError(q.sql, q.params, cause instanceof Error ? cause : new Error(String(cause)));
  };
  if ('unsafe' in client) {
    const [only] = queries;
    // One statement (the merchant list): no Promise.all around it.
    if (queries.length === 1 && only) return client.unsafe(only.sql, only.params).then((rows) => [rows], wrap(only));
    return Promise.all(queries.map((q) => client.unsafe(q.sql, q.params).catch(wrap(q))));
  }
  return (async () => {
    const results: Row[][] = [];
    for (const q of queries) results.push((await client.query(q.sql, q.params).catch(wrap(q))).rows);
    return results;
  })();
}

/** The rows of one read-only statement as the bytes PostgreSQL sent (postgres.js `raw()`). */
export async function readRawRows(db: Database, statement: SQL): Promise<(Buffer | null)[][] | null> {
  const client = (db as unknown as { $client: PostgresJsClient | PgliteClient }).$client;
  if (!('unsafe' in client)) return null;
  const q = toQuery(statement);
  try {
    return await client.unsafe(q.sql, q.params).raw();
  } catch (cause) {
    throw new DrizzleQueryError(q.sql, q.params, cause instanceof Error ? cause : new Error(String(cause)));
  }
}
