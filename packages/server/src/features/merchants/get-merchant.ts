import type { Merchant } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/** Readers of a merchant: the database or an open transaction. */
type Reader = Pick<Database, 'execute'>;

/**
 * `GET /v1/partners/merchant/{merchantId}`: the partner's live merchant with its tags, as the list
 * shows it, in one statement. Missing, deleted and another partner's merchant: the same 404.
 */
export async function getMerchant(db: Reader, partner: AuthenticatedPartner, merchantId: string): Promise<Merchant> {
  const [row] = rowsOf<{ merchant: string }>(
    await db.execute(sql`select json_build_object(
        'merchantId', m.id,
        'name', m.name,
        'livemode', ${partner.livemode}::boolean,
        'createdAt', to_char(m.created_at at time zone 'UTC', ${ISO}),
        'retentionDays', m.retention_days,
        'tags', coalesce((
          select json_agg(json_build_object(
            'hostname', t.domain,
            'tagId', t.id,
            'status', t.status,
            'createdAt', to_char(t.created_at at time zone 'UTC', ${ISO}),
            'livemode', ${partner.livemode}::boolean,
            'isConnected', t.is_connected,
            'isVerified', t.is_verified
          ) order by t.created_at, t.id)
          from tags t where t.merchant_id = m.id
        ), '[]'::json)
      )::text as merchant
      from merchants m
      where m.id = ${merchantId}::uuid and m.partner_id = ${partner.id}::uuid and m.deleted_at is null`),
  );
  if (!row) throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${merchantId} under this partner`);
  return JSON.parse(row.merchant) as Merchant;
}
