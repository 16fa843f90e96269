import { AsyncLocalStorage } from 'node:async_hooks';
import { sql } from 'drizzle-orm';
import type { PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import type { Database } from './client.js';
import type * as schema from './schema/index.js';

/**
 * Every wait on the database has a deadline (docs/decisions.md, "Production operations"):
 * - server side, `statement_timeout` (DB_STATEMENT_TIMEOUT, set on every pooled connection):
 *   PostgreSQL cancels a statement that runs too long (SQLSTATE 57014);
 * - client side, a per-query timer of statement_timeout + DEADLINE_MARGIN_MS (the patched
 *   postgres.js `query_timeout`): a query still waiting for a pooled connection is dropped, one sent
 *   on a connection that went silent (no answer, no close: a partition, a stuck failover) discards
 *   that connection; the query fails with code QUERY_DEADLINE;
 * - TCP keepalive on every connection (db/client.ts) finds a dead peer on an idle connection.
 * A longer budget for one piece of work (the export, migrations) is asked for with
 * `withStatementTimeout`, which raises both for the queries inside it.
 */
export const DEADLINE_MARGIN_MS = 500;

const budget = new AsyncLocalStorage<number>();

/**
 * The error of a wait on the database that passed its deadline, as the patched postgres.js makes
 * it: code QUERY_DEADLINE; `sent` false when the work surely never reached the database.
 */
export function deadlineError(ms: number, sent: boolean): Error {
  return Object.assign(new Error(`QUERY_DEADLINE: no answer from the database within ${ms} ms`), {
    code: 'QUERY_DEADLINE',
    sent,
  });
}

/** The statement budget in force for queries started here (ms), or undefined for the default. */
export function currentStatementBudget(): number | undefined {
  return budget.getStore();
}

export type Transaction = PgTransaction<PgQueryResultHKT, typeof schema>;

/**
 * Runs `fn` in a transaction whose statements may each take up to `ms` (server side:
 * `SET LOCAL statement_timeout`; client side: the query deadline becomes `ms` + margin), for work
 * that is legitimately long, such as the export: `withStatementTimeout(db, env.DB_LONG_STATEMENT_TIMEOUT, (tx) => ...)`.
 * Queries inside `fn` must go through `tx` (on PGlite, touching the outer `db` deadlocks).
 * On PGlite (in process, no network) the client deadline does not apply.
 */
export function withStatementTimeout<T>(db: Database, ms: number, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  const timeout = Math.max(1, Math.floor(ms));
  return budget.run(timeout, () =>
    db.transaction(async (tx) => {
      await tx.execute(sql.raw(`set local statement_timeout = ${timeout}`));
      return fn(tx as unknown as Transaction);
    }),
  );
}

/** Runs `fn` with a client-side query deadline of `ms` + margin (no transaction; e.g. the migrations' own client). */
export function withQueryBudget<T>(ms: number, fn: () => T): T {
  return budget.run(Math.max(1, Math.floor(ms)), fn);
}
