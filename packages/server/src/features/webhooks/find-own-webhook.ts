import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { type WebhookEndpointRow, webhookEndpoints } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The partner's live endpoint, or 404 WEBHOOK_NOT_FOUND: missing, deleted and other partners'
 * endpoints are indistinguishable.
 */
export async function findOwnWebhook(
  db: Database,
  partner: AuthenticatedPartner,
  webhookId: string,
): Promise<WebhookEndpointRow> {
  const [row] = UUID.test(webhookId)
    ? await db
        .select()
        .from(webhookEndpoints)
        .where(
          and(
            eq(webhookEndpoints.id, webhookId),
            eq(webhookEndpoints.partnerId, partner.id),
            isNull(webhookEndpoints.deletedAt),
          ),
        )
        .limit(1)
    : [];
  if (!row) throw new AppError('WEBHOOK_NOT_FOUND', `No webhook endpoint ${webhookId}`);
  return row;
}
