import type { CreateMerchantResponse } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants } from '../../db/schema/index.js';
import type { AuthenticatedPartner } from '../partner/authenticate.js';
import { lockPartnerCaps, type PartnerCaps, refuseAtCap } from '../partner/caps.js';

/** Creates a merchant; 409 LIMIT_EXCEEDED once the partner has MAX_MERCHANTS_PER_PARTNER. */
export async function createMerchant(
  db: Database,
  partner: AuthenticatedPartner,
  caps: Pick<PartnerCaps, 'maxMerchants'>,
  input: { name: string },
): Promise<CreateMerchantResponse> {
  return db.transaction(async (tx) => {
    await lockPartnerCaps(tx, partner.id);
    await refuseAtCap(
      tx,
      'MAX_MERCHANTS_PER_PARTNER',
      caps.maxMerchants,
      sql`select 1 from merchants where partner_id = ${partner.id}::uuid`,
    );
    const [row] = await tx
      .insert(merchants)
      .values({ partnerId: partner.id, name: input.name })
      .returning({ id: merchants.id });
    if (!row) throw new Error('insert returned no row');
    return { merchantId: row.id };
  });
}
