import {
  buildPagination,
  type ListWebhookDeliveriesResponse,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEventType,
} from '@partner/shared-schemas';
import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { webhookDeliveries, webhookMessages } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { deliveryErrorOf } from './delivery-errors.js';
import { findOwnWebhook, UUID } from './find-own-webhook.js';
import { WEBHOOK_WAKE_CHANNEL } from './outbox.js';

const deliveryColumns = {
  deliveryId: webhookDeliveries.id,
  messageId: webhookDeliveries.messageId,
  eventType: webhookMessages.type,
  status: webhookDeliveries.status,
  attempts: webhookDeliveries.attempts,
  lastStatusCode: webhookDeliveries.lastStatusCode,
  lastError: webhookDeliveries.lastError,
  nextAttemptAt: webhookDeliveries.nextAttemptAt,
  createdAt: webhookDeliveries.createdAt,
};

type DeliveryRow = {
  deliveryId: string;
  messageId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
};

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    ...row,
    eventType: row.eventType as WebhookEventType,
    lastError: deliveryErrorOf(row.lastError),
    nextAttemptAt: row.nextAttemptAt ? row.nextAttemptAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** One delivery of an endpoint, by id or by message; 404 WEBHOOK_DELIVERY_NOT_FOUND otherwise. */
export async function getDelivery(
  db: Database,
  endpointId: string,
  by: { deliveryId: string } | { messageId: string },
): Promise<WebhookDelivery> {
  const key = 'deliveryId' in by ? by.deliveryId : by.messageId;
  const [row] = UUID.test(key)
    ? await db
        .select(deliveryColumns)
        .from(webhookDeliveries)
        .innerJoin(webhookMessages, eq(webhookMessages.id, webhookDeliveries.messageId))
        .where(
          and(
            eq(webhookDeliveries.endpointId, endpointId),
            'deliveryId' in by ? eq(webhookDeliveries.id, key) : eq(webhookDeliveries.messageId, key),
          ),
        )
        .limit(1)
    : [];
  if (!row) throw new AppError('WEBHOOK_DELIVERY_NOT_FOUND', `No delivery ${key} for webhook endpoint ${endpointId}`);
  return toDelivery(row);
}

/** One page of an endpoint's deliveries, newest first. */
export async function listWebhookDeliveries(
  db: Database,
  partner: AuthenticatedPartner,
  params: { webhookId: string; page: number; limit: number },
): Promise<ListWebhookDeliveriesResponse> {
  const endpoint = await findOwnWebhook(db, partner, params.webhookId);
  const own = eq(webhookDeliveries.endpointId, endpoint.id);
  const [rows, totals] = await Promise.all([
    db
      .select(deliveryColumns)
      .from(webhookDeliveries)
      .innerJoin(webhookMessages, eq(webhookMessages.id, webhookDeliveries.messageId))
      .where(own)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(params.limit)
      .offset((params.page - 1) * params.limit),
    db.select({ n: count() }).from(webhookDeliveries).where(own),
  ]);
  return {
    deliveries: rows.map(toDelivery),
    pagination: buildPagination(params.page, params.limit, Number(totals[0]?.n ?? 0)),
  };
}

/**
 * Sends a delivery again as soon as possible, whatever its state: a pending one is due now, a
 * succeeded or failed one becomes pending for one more attempt (after the schedule is used up,
 * one failure makes it `failed` again). Same message, same `webhook-id`. A delivery in flight loses
 * its lease: that attempt's outcome is not recorded, and the retry is a new attempt.
 */
export async function retryWebhookDelivery(
  db: Database,
  partner: AuthenticatedPartner,
  params: { webhookId: string; deliveryId: string },
): Promise<WebhookDelivery> {
  const endpoint = await findOwnWebhook(db, partner, params.webhookId);
  const current = await getDelivery(db, endpoint.id, { deliveryId: params.deliveryId });
  // The answer is read before the commit: after it, the dispatcher woken by the notify may already
  // have sent it, and the answer would not be the `pending` the operation promises.
  return db.transaction(async (tx) => {
    await tx
      .update(webhookDeliveries)
      .set({ status: 'pending', nextAttemptAt: sql`now()`, claimedUntil: null, updatedAt: sql`now()` })
      .where(and(eq(webhookDeliveries.id, current.deliveryId), eq(webhookDeliveries.endpointId, endpoint.id)));
    await tx.execute(sql`select pg_notify(${WEBHOOK_WAKE_CHANNEL}, '')`);
    return getDelivery(tx, endpoint.id, { deliveryId: current.deliveryId });
  });
}
