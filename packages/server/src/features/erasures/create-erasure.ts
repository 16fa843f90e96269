import type { Erasure } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { ERASURE_COLUMNS, toErasure } from './erasure-view.js';

/** `POST /v1/partners/erasures`. */
export async function createErasure(
  db: Database,
  partner: AuthenticatedPartner,
  input: { muid: string; merchantId?: string | undefined; suppress?: boolean | undefined },
): Promise<Erasure> {
  if (input.merchantId !== undefined) await findOwnMerchant(db, partner, input.merchantId);
  const [row] = rowsOf(
    await db.execute(sql`
      insert into erasures (partner_id, merchant_id, muid, suppress)
      values (${partner.id}::uuid, ${input.merchantId ?? null}::uuid, ${input.muid}, ${input.suppress === true})
      returning ${ERASURE_COLUMNS}`),
  );
  if (!row) throw new Error('erasure insert returned no row');
  return toErasure(row);
}
