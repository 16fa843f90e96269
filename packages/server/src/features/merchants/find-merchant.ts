import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { type MerchantRow, merchants } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';

/** The partner's live merchant, or 404 MERCHANT_NOT_FOUND: another partner's or a deleted merchant answers as a missing one. */
export async function findOwnMerchant(
  db: Database,
  partner: AuthenticatedPartner,
  merchantId: string,
): Promise<MerchantRow> {
  const [row] = await db
    .select()
    .from(merchants)
    .where(and(eq(merchants.id, merchantId), eq(merchants.partnerId, partner.id), isNull(merchants.deletedAt)))
    .limit(1);
  if (!row) throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${merchantId} under this partner`);
  return row;
}
