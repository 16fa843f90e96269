/**
 * Every wait on the database has a deadline (docs/decisions/database-access.md):
 * - server side, `statement_timeout` (DB_STATEMENT_TIMEOUT, set on every pooled connection):
 *   PostgreSQL cancels a statement that runs too long (SQLSTATE 57014);
 * - client side, a per-query timer of statement_timeout + DEADLINE_MARGIN_MS (the patched
 *   postgres.js `query_timeout`): a query still waiting for a pooled connection is dropped, one sent
 *   on a connection that went silent (no answer, no close: a partition, a stuck failover) discards
 *   that connection; the query fails with code QUERY_DEADLINE;
 * - TCP keepalive on every connection (db/client.ts) finds a dead peer on an idle connection.
 * Migrations run on their own connection with the longer DB_LONG_STATEMENT_TIMEOUT (db/client.ts).
 * Nothing else needs a longer budget: the export reads in short keyset batches, each its own
 * statement under the normal deadline (features/events/read/export-events.ts).
 */
export const DEADLINE_MARGIN_MS = 500;

/** The error of a wait on the database that passed its deadline, as the patched postgres.js makes it. */
export function deadlineError(ms: number, sent: boolean): Error {
  return Object.assign(new Error(`QUERY_DEADLINE: no answer from the database within ${ms} ms`), {
    code: 'QUERY_DEADLINE',
    sent,
  });
}
