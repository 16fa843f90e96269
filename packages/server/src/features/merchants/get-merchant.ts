import type { Merchant } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { merchantJson } from './merchant-json.js';

/** Readers of a merchant: the database or an open transaction. */
type Reader = Pick<Database, 'execute'>;

/** `GET /v1/partners/merchant/{merchantId}`. Missing, deleted and another partner's merchant: the same 404. */
export async function getMerchant(db: Reader, partner: AuthenticatedPartner, merchantId: string): Promise<Merchant> {
  const [row] = rowsOf<{ merchant: string }>(
    await db.execute(sql`select ${merchantJson('m', sql`${partner.livemode}::boolean`)}::text as merchant
      from merchants m
      where m.id = ${merchantId}::uuid and m.partner_id = ${partner.id}::uuid and m.deleted_at is null`),
  );
  if (!row) throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${merchantId} under this partner`);
  return JSON.parse(row.merchant) as Merchant;
}
