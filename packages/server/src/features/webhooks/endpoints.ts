import {
  buildPagination,
  type CreateWebhookResponse,
  type ListWebhooksResponse,
  type RotateWebhookSecretResponse,
  type TestWebhookResponse,
  type WebhookEndpoint,
  type WebhookEventType,
} from '@partner/shared-schemas';
import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { type WebhookEndpointRow, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { lockPartnerCaps, type PartnerCaps, refuseAtCap, refuseOverTestBudget } from '../partners/caps.js';
import { getDelivery } from './deliveries.js';
import { findOwnWebhook } from './find-own-webhook.js';
import { enqueueWebhookEvent } from './outbox.js';
import { generateWebhookSecret } from './signing.js';
import { checkWebhookUrl, type UrlSafetyOptions } from './url-safety.js';

/** How long a rotated-out secret keeps signing next to the new one. */
const SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

function toEndpoint(row: WebhookEndpointRow, livemode: boolean): WebhookEndpoint {
  return {
    webhookId: row.id,
    url: row.url,
    events: (row.events as WebhookEventType[] | null) ?? null,
    description: row.description,
    livemode,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * Registers an endpoint and returns its signing secret (the only time it is shown); 409
 * LIMIT_EXCEEDED once the partner has MAX_WEBHOOK_ENDPOINTS_PER_PARTNER live endpoints.
 */
export async function createWebhook(
  db: Database,
  partner: AuthenticatedPartner,
  safety: UrlSafetyOptions,
  caps: Pick<PartnerCaps, 'maxWebhookEndpoints'>,
  input: { url: string; events?: WebhookEventType[] | undefined; description?: string | undefined },
): Promise<CreateWebhookResponse> {
  const url = await checkWebhookUrl(input.url, safety);
  const events = input.events ? [...new Set(input.events)] : null;
  const secret = generateWebhookSecret();
  const row = await db.transaction(async (tx) => {
    await lockPartnerCaps(tx, partner.id);
    await refuseAtCap(
      tx,
      'MAX_WEBHOOK_ENDPOINTS_PER_PARTNER',
      caps.maxWebhookEndpoints,
      sql`select 1 from webhook_endpoints where partner_id = ${partner.id}::uuid and deleted_at is null`,
    );
    const [inserted] = await tx
      .insert(webhookEndpoints)
      .values({ partnerId: partner.id, url, events, description: input.description || null, secret })
      .returning();
    return inserted;
  });
  if (!row) throw new Error('webhook endpoint insert returned no row');
  return { ...toEndpoint(row, partner.livemode), secret, secretOmitted: false };
}

/** One page of the partner's live endpoints, oldest first; never with secrets. */
export async function listWebhooks(
  db: Database,
  partner: AuthenticatedPartner,
  params: { page: number; limit: number },
): Promise<ListWebhooksResponse> {
  const own = and(eq(webhookEndpoints.partnerId, partner.id), isNull(webhookEndpoints.deletedAt));
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(webhookEndpoints)
      .where(own)
      .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id))
      .limit(params.limit)
      .offset((params.page - 1) * params.limit),
    db.select({ n: count() }).from(webhookEndpoints).where(own),
  ]);
  return {
    webhooks: rows.map((row) => toEndpoint(row, partner.livemode)),
    pagination: buildPagination(params.page, params.limit, Number(totals[0]?.n ?? 0)),
  };
}

/**
 * Deletes an endpoint: nothing is sent to it any more (its pending deliveries become `failed`);
 * the row stays, without a way to reach it through the API, until the partner is deleted.
 */
export async function deleteWebhook(db: Database, partner: AuthenticatedPartner, webhookId: string): Promise<void> {
  const endpoint = await findOwnWebhook(db, partner, webhookId);
  await db.transaction(async (tx) => {
    await tx.update(webhookEndpoints).set({ deletedAt: sql`now()` }).where(eq(webhookEndpoints.id, endpoint.id));
    await tx
      .update(webhookDeliveries)
      .set({ status: 'failed', lastError: 'endpoint_deleted', nextAttemptAt: null, updatedAt: sql`now()` })
      .where(and(eq(webhookDeliveries.endpointId, endpoint.id), eq(webhookDeliveries.status, 'pending')));
  });
}

/**
 * A new secret. The current one becomes the previous secret and keeps signing next to the new one
 * for 24 h (two signatures per message), so receivers can switch over without losing a message.
 */
export async function rotateWebhookSecret(
  db: Database,
  partner: AuthenticatedPartner,
  webhookId: string,
): Promise<RotateWebhookSecretResponse> {
  const endpoint = await findOwnWebhook(db, partner, webhookId);
  const secret = generateWebhookSecret();
  const previousSecretExpiresAt = new Date(Date.now() + SECRET_ROTATION_OVERLAP_MS);
  await db
    .update(webhookEndpoints)
    .set({ secret, previousSecret: sql`${webhookEndpoints.secret}`, previousSecretExpiresAt })
    .where(eq(webhookEndpoints.id, endpoint.id));
  return { secret, secretOmitted: false, previousSecretExpiresAt: previousSecretExpiresAt.toISOString() };
}

/**
 * Queues a `webhook.test` message to this endpoint only; returns its delivery as queued. The delivery is read
 * inside the enqueueing transaction: read after the commit, a dispatcher woken by the commit's notify could
 * already have sent it, and the answer would say `succeeded` one time and `pending` the next.
 */
export async function testWebhook(
  db: Database,
  partner: AuthenticatedPartner,
  caps: Pick<PartnerCaps, 'webhookTestCalls' | 'webhookTestWindowMs'>,
  webhookId: string,
): Promise<TestWebhookResponse> {
  const endpoint = await findOwnWebhook(db, partner, webhookId);
  return db.transaction(async (tx) => {
    // Each test event is a delivery in the shared queue: a budget per partner and window.
    await lockPartnerCaps(tx, partner.id);
    await refuseOverTestBudget(tx, partner.id, caps);
    const { messageId } = await enqueueWebhookEvent(tx, {
      partnerId: partner.id,
      type: 'webhook.test',
      data: { webhookId: endpoint.id, message: 'A test event from Partner Tags: your endpoint receives webhooks.' },
      endpointId: endpoint.id,
    });
    return getDelivery(tx, endpoint.id, { messageId });
  });
}
