import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from './outbox.js';

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
 * One pass of webhook retention (WEBHOOK_RETENTION, docs/decisions.md "Webhook retention"): of the
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
 * inserted with its message (services/webhooks/outbox.ts), so none can appear for an old message.
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
  const messages = rowsOf(
    await db.execute(sql`
      delete from webhook_messages
      where id in (
        select m.id from webhook_messages m
        where m.created_at < ${cutoff}
          and not exists (select 1 from webhook_deliveries d where d.message_id = m.id)
        order by m.created_at
        limit ${batch}
        for update skip locked
      )
      returning id`),
  ).length;
  const endpoints = rowsOf(
    await db.execute(sql`
      delete from webhook_endpoints
      where id in (
        select e.id from webhook_endpoints e
        where e.deleted_at < ${cutoff}
          and not exists (select 1 from webhook_deliveries d where d.endpoint_id = e.id)
        limit ${batch}
        for update skip locked
      )
      returning id`),
  ).length;
  return { deliveries, messages, endpoints };
}
