import type { DeleteMerchantResponse } from '@partner/shared-schemas';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';

/** Where the deleted merchant's tags are announced in this process (runtime/collector/deleted-tags.ts). */
export interface TagsGone {
  gone(tagIds: readonly string[]): void;
}

/** `DELETE /v1/partners/merchant/{merchantId}`, one transaction. */
export async function deleteMerchant(
  db: Database,
  partner: AuthenticatedPartner,
  tagsGone: TagsGone,
  merchantId: string,
): Promise<DeleteMerchantResponse> {
  const tagIds = await db.transaction(async (tx) => {
    const marked = rowsOf(
      await tx.execute(sql`
        update merchants set deleted_at = now()
        where id = ${merchantId}::uuid and partner_id = ${partner.id}::uuid and deleted_at is null
        returning id`),
    );
    if (marked.length === 0) throw new AppError('MERCHANT_NOT_FOUND', `No merchant ${merchantId} under this partner`);
    const removed = rowsOf<{ id: string }>(
      await tx.execute(sql`delete from tags where merchant_id = ${merchantId}::uuid returning id::text as id`),
    );
    await tx.execute(sql`
      update partner_usage set merchants = greatest(merchants - 1, 0) where partner_id = ${partner.id}::uuid`);
    return removed.map((row) => row.id);
  });
  tagsGone.gone(tagIds);
  return { merchantId, deleted: true, purge: 'pending' };
}
