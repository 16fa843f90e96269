import type { Merchant } from '@partner/shared-schemas';
import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { getMerchant } from './get-merchant.js';
import { assertZoneKnown } from './merchant-zone.js';

/** `PATCH /v1/partners/merchant/{merchantId}`: sets the given fields (`name`, `retentionDays`, `timezone`) of the partner's live merchant. */
export async function updateMerchant(
  db: Database,
  partner: AuthenticatedPartner,
  input: {
    merchantId: string;
    name?: string | undefined;
    retentionDays?: number | null | undefined;
    timezone?: string | undefined;
  },
): Promise<Merchant> {
  if (input.timezone !== undefined) await assertZoneKnown(db, input.timezone);
  return db.transaction(async (tx) => {
    const updated = await tx
      .update(merchants)
      .set({
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.retentionDays === undefined ? {} : { retentionDays: input.retentionDays, retentionCheckedAt: null }),
        ...(input.timezone === undefined ? {} : { timezone: input.timezone }),
      })
      .where(and(eq(merchants.id, input.merchantId), eq(merchants.partnerId, partner.id), isNull(merchants.deletedAt)))
      .returning({ id: merchants.id });
    if (updated.length === 0) {
      throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${input.merchantId} under this partner`);
    }
    return getMerchant(tx, partner, input.merchantId);
  });
}
