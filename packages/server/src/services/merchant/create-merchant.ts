import type { CreateMerchantResponse } from '@partner/shared-schemas';
import type { Database } from '../../db/client.js';
import { merchants } from '../../db/schema/index.js';
import type { AuthenticatedPartner } from '../partner/authenticate.js';

export async function createMerchant(
  db: Database,
  partner: AuthenticatedPartner,
  input: { name: string },
): Promise<CreateMerchantResponse> {
  const [row] = await db
    .insert(merchants)
    .values({ partnerId: partner.id, name: input.name })
    .returning({ id: merchants.id });
  if (!row) throw new Error('insert returned no row');
  return { merchantId: row.id };
}
