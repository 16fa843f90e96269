import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';

/** Rows deleted per statement: short transactions, one batch after the other. */
export const RETENTION_BATCH = 1_000;

export interface RetentionPass {
  /** Finished deliveries (succeeded or failed) of messages past retention, deleted by this pass. */
  deliveries: number;
  /** Messages past retention with no delivery left, deleted by this pass. */
  messages: number;
  /** Endpoints deleted (by their partner) before the cutoff with no delivery left, removed by this pass. */
  endpoints: number;
}

/**
 * One pass of webhook retention (WEBHOOK_RETENTION; docs/decisions/webhooks.md, "Retention"): of the
 * messages created more than `retentionMs` ago, deletes at most `batch` finished deliveries, then at
 * most `batch` messages that have no delivery left, and endpoints their partner deleted before the
 * cutoff that have no delivery left (a deleted endpoint answers 404 from the moment it is deleted; its
 * row stayed for its deliveries). A pending delivery is never deleted, whatever its age, and its
 * message stays with it: nothing still to be sent is dropped.
 *
 * Deliveries go first, each locked (SKIP LOCKED: a row a worker or another pass holds is left for
 * later) and its status checked again on the locked row (`status <> 'pending'` in the DELETE
 * itself), so a retry that made a delivery pending meanwhile keeps it; a retry that comes after
 * finds it gone (404). Messages go once none of their deliveries is left: a delivery is only ever
 * inserted with its message (features/webhooks/outbox.ts), so none can appear for an old message.
 */
export async function deleteExpiredWebhooks(
  db: Database,
  retentionMs: number,
  batch = RETENTION_BATCH,
): Promise<RetentionPass> {
  const cutoff = sql`now() - make_interval(secs => ${Math.floor(retentionMs / 1000)})`;
  const deliveries = rowsOf(
    await db.execute(sql`
      delete from webhook_deliveries
      where id in (
        select d.id from webhook_deliveries d
        join webhook_messages m on m.id = d.message_id
        where m.created_at < ${cutoff} and d.status <> 'pending'
        order by m.created_at
        limit ${batch}
        for update of d skip locked
      ) and status <> 'pending'
      returning id`),
  ).length;
  // A message, then an endpoint its partner deleted, once past the cutoff and no delivery names it.
  const emptied = async (table: string, since: string, reference: string) =>
    rowsOf(
      await db.execute(sql`
        delete from ${sql.identifier(table)}
        where id in (
          select x.id from ${sql.identifier(table)} x
          where x.${sql.identifier(since)} < ${cutoff}
            and not exists (select 1 from webhook_deliveries d where d.${sql.identifier(reference)} = x.id)
          order by x.${sql.identifier(since)}
          limit ${batch}
          for update skip locked
        )
        returning id`),
    ).length;
  const messages = await emptied('webhook_messages', 'created_at', 'message_id');
  const endpoints = await emptied('webhook_endpoints', 'deleted_at', 'endpoint_id');
  return { deliveries, messages, endpoints };
}
