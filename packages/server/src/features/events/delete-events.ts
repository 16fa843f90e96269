import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';

/** Deletes at most `batch` events matching `where`, found by an index scan and deleted by their key. */
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
