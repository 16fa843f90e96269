import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';

/**
 * Deletes at most `batch` events matching `where`, found by an index scan and deleted by their key
 * (merchant_id, id, event_time), with their ids in `event_ids` (by its key), in one statement and
 * its own short transaction. The deleted rows are the CTE `d`, with the columns `returning` names
 * (of `e`); `rest` ends the statement (more CTEs, each starting with a comma, then a select from
 * `d`) and its result is returned as `db.execute` gives it.
 *
 * The id goes with its event (migration 0028: `event_ids` holds the id of every stored event and
 * nothing else cleans it), so a retry of a deleted event is stored again, as on one table.
 *
 * Not by `ctid`, as for the other tables: `events` is partitioned (migration 0028) and a ctid is
 * unique within one partition only. The key joins must be nested loops, one probe per row with
 * run-time partition pruning (only the row's month is opened) and one probe of `event_ids_pkey`: a
 * hash join, which the planner picks for a few thousand keys, reads every partition (or all of
 * `event_ids`) whole. Hash and merge joins are therefore off, for this transaction only.
 */
export async function deleteEventBatch(
  db: Database,
  where: SQL,
  batch: number,
  returning: SQL,
  rest: SQL = sql`select 1 from d`,
): Promise<unknown> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`,
    );
    return tx.execute(sql`
      with d as (
        delete from events e
        using (select merchant_id, id, event_time from events where ${where} limit ${batch}) k
        where e.merchant_id = k.merchant_id and e.id = k.id and e.event_time = k.event_time
        returning e.merchant_id as deleted_merchant_id, e.id as deleted_id, ${returning}
      ), deleted_ids as (
        delete from event_ids i using d where i.merchant_id = d.deleted_merchant_id and i.id = d.deleted_id
      )
      ${rest}`);
  });
}
