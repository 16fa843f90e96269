import type { TriggerableStatsEvent, TriggerStatsResponse } from '@partner/shared-schemas';
import { AppError } from '../../kernel/errors.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { getPartnerSettings } from '../partners/settings.js';
import type { StatsDeps } from '../stats/visitors-by-hour.js';
import { enqueueWebhookEvent } from '../webhooks/outbox.js';
import { buildDigest } from './digest.js';
import { lastWeekOf, type NoticeMerchant } from './notice-merchant.js';
import { lastWholeHour, measureSpike } from './spike.js';

/**
 * Test mode's stats trigger (docs/decisions/digests.md): builds the merchant's `stats.digest` of its
 * last whole week, or its `stats.spike` of the last whole hour (sent whatever the ratio), as the jobs
 * do, and sends it through the outbox to the subscribed test-mode endpoints now. It uses up no week
 * or day (no `stats_notices` row) and needs no setting on. A live key: 403 TEST_MODE_ONLY.
 */
export async function triggerStatsNotice(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  input: { merchantId: string; event: TriggerableStatsEvent },
): Promise<TriggerStatsResponse> {
  if (partner.livemode) {
    throw new AppError('TEST_MODE_ONLY', 'Triggers are for test mode: call this with an mp_test_ key.');
  }
  const row = await findOwnMerchant(deps.db, partner, input.merchantId);
  const merchant: NoticeMerchant = {
    merchantId: row.id,
    partnerId: partner.id,
    livemode: partner.livemode,
    timezone: row.timezone,
  };
  const now = Date.now();
  const data =
    input.event === 'stats.digest'
      ? await buildDigest(deps, merchant, lastWeekOf(merchant.timezone, now))
      : await measureSpike(
          deps,
          merchant,
          lastWholeHour(now),
          (await getPartnerSettings(deps.db, partner)).statsSpike.multiple,
        );
  const sent = await deps.db.transaction((tx) =>
    enqueueWebhookEvent(tx, { partnerId: partner.id, type: input.event, data }),
  );
  return { type: input.event, messageId: sent.messageId, deliveries: sent.deliveries, data };
}
