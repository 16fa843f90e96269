import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';

/**
 * Deletes at most `batch` events matching `where`, found by an index scan and deleted by their key
 * (merchant_id, id, event_time), in its own short transaction. `statement` wraps the delete (whose
 * RETURNING is `returning`, columns of `e`) into the statement run, e.g. a CTE that also records
 * what went; its result is returned as `db.execute` gives it.
 *
 * Not by `ctid`, as for the other tables: `events` is partitioned (migration 0028) and a ctid is
 * unique within one partition only. The key join must be a nested loop, one probe of the key per
 * row with run-time partition pruning (only the row's month is opened): a hash join, which the
 * planner picks for a few thousand keys, reads every partition whole. Hash and merge joins are
 * therefore off, for this transaction only.
 */
export async function deleteEventBatch(
  db: Database,
  where: SQL,
  batch: number,
  returning: SQL,
  statement: (deleted: SQL) => SQL = (deleted) => deleted,
): Promise<unknown> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`,
    );
    const deleted = sql`delete from events e
      using (select merchant_id, id, event_time from events where ${where} limit ${batch}) k
      where e.merchant_id = k.merchant_id and e.id = k.id and e.event_time = k.event_time
      returning ${returning}`;
    return tx.execute(statement(deleted));
  });
}
