import type { WebhookStatsDigestData, WebhookStatsSpikeData } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { type EnqueuedWebhookEvent, enqueueWebhookEvent } from '../webhooks/outbox.js';
import type { NoticeMerchant } from './notice-merchant.js';

export type StatsNotice =
  | { kind: 'digest'; period: string; data: WebhookStatsDigestData }
  | { kind: 'spike'; period: string; data: WebhookStatsSpikeData };

/**
 * Sends a notice once: its row in `stats_notices` (key: merchant, kind, period) and the webhook's
 * outbox rows commit together, and a second insert of the key does nothing, so however many
 * processes or restarts build the same notice, one webhook goes out. Null: it was sent already
 * (or the merchant is gone).
 */
export async function sendStatsNotice(
  db: Database,
  merchant: NoticeMerchant,
  notice: StatsNotice,
): Promise<EnqueuedWebhookEvent | null> {
  return db.transaction(async (tx) => {
    const claimed = rowsOf(
      await tx.execute(sql`
        insert into stats_notices (merchant_id, kind, period)
        select id, ${notice.kind}, ${notice.period} from merchants
        where id = ${merchant.merchantId}::uuid and deleted_at is null
        on conflict do nothing
        returning 1`),
    );
    if (claimed.length === 0) return null;
    const sent = await enqueueWebhookEvent(tx, {
      partnerId: merchant.partnerId,
      type: notice.kind === 'digest' ? 'stats.digest' : 'stats.spike',
      data: notice.data,
    });
    await tx.execute(sql`
      update stats_notices set message_id = ${sent.messageId}::uuid
      where merchant_id = ${merchant.merchantId}::uuid and kind = ${notice.kind} and period = ${notice.period}`);
    return sent;
  });
}
