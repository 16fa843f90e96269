import type { WebhookEventType } from '@partner/shared-schemas';

import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { webhookMessages } from '../../db/schema/index.js';

/** Channel the delivery workers LISTEN on: a commit that enqueued deliveries wakes them at once. */
export const WEBHOOK_WAKE_CHANNEL = 'partner_webhook_deliveries';

export interface WebhookEventInput {
  partnerId: string;
  type: WebhookEventType;
  /** The event's `data` (for tag.* events the tag as `GET /v1/partners/tag/{tagId}` returns it). */
  data: Record<string, unknown>;
  /** Only this endpoint (webhook.test); default: every live endpoint of the partner subscribed to `type`. */
  endpointId?: string;
}

export interface EnqueuedWebhookEvent {
  messageId: string;
  /** Deliveries created: one per matching endpoint (0 when the partner has none). */
  deliveries: number;
}

/**
 * The transactional outbox. Call it with the transaction that makes the change the event reports:
 * the message and one pending delivery per matching endpoint commit (or roll back) with it, so a
 * crash never loses or invents a notification. The delivery worker (jobs/webhook-delivery.ts) sends
 * them; a NOTIFY at commit wakes it.
 *
 * ```ts
 * await db.transaction(async (tx) => {
 *   await tx.update(tags).set({ isVerified: true }).where(eq(tags.id, tagId));
 *   await enqueueWebhookEvent(tx, { partnerId, type: 'tag.verified', data: tagView });
 * });
 * ```
 */
export async function enqueueWebhookEvent(tx: Database, event: WebhookEventInput): Promise<EnqueuedWebhookEvent> {
  const [message] = await tx
    .insert(webhookMessages)
    .values({ partnerId: event.partnerId, type: event.type, data: event.data })
    .returning({ id: webhookMessages.id });
  if (!message) throw new Error('webhook message insert returned no row');

  const onlyEndpoint = event.endpointId ? sql`and e.id = ${event.endpointId}::uuid` : sql``;
  const result = await tx.execute(sql`
    insert into webhook_deliveries (message_id, endpoint_id)
    select ${message.id}::uuid, e.id from webhook_endpoints e
    where e.partner_id = ${event.partnerId}::uuid and e.deleted_at is null
      and (e.events is null or ${event.type} = any(e.events) or ${event.endpointId ?? null}::uuid is not null)
      ${onlyEndpoint}
    returning id`);
  const inserted = rowsOf(result);
  if (inserted.length > 0) await tx.execute(sql`select pg_notify(${WEBHOOK_WAKE_CHANNEL}, '')`);
  return { messageId: message.id, deliveries: inserted.length };
}
