import { buildPagination, type ListMerchantsResponse, type TagSummary } from '@partner/shared-schemas';
import { asc, count, eq, inArray } from 'drizzle-orm';
import type { AuthenticatedPartner } from '../../auth/authenticate.js';
import type { Database } from '../../db/client.js';
import { merchants, tags } from '../../db/schema/index.js';

export interface ListMerchantsParams {
  page: number;
  limit: number;
}

/** One page of the partner's merchants in creation order (stable while new merchants are added). */
export async function listMerchants(
  db: Database,
  partner: AuthenticatedPartner,
  { page, limit }: ListMerchantsParams,
): Promise<ListMerchantsResponse> {
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(merchants)
      .where(eq(merchants.partnerId, partner.id))
      .orderBy(asc(merchants.createdAt), asc(merchants.id))
      .limit(limit)
      .offset((page - 1) * limit),
    db.select({ total: count() }).from(merchants).where(eq(merchants.partnerId, partner.id)),
  ]);
  const tagRows =
    rows.length === 0
      ? []
      : await db
          .select()
          .from(tags)
          .where(
            inArray(
              tags.merchantId,
              rows.map((row) => row.id),
            ),
          )
          .orderBy(asc(tags.createdAt), asc(tags.id));
  const tagsByMerchant = new Map<string, TagSummary[]>();
  for (const tag of tagRows) {
    const list = tagsByMerchant.get(tag.merchantId) ?? [];
    list.push({
      hostname: tag.domain,
      tagId: tag.id,
      status: tag.status,
      createdAt: tag.createdAt.toISOString(),
      isConnected: tag.isConnected,
      isVerified: tag.isVerified,
    });
    tagsByMerchant.set(tag.merchantId, list);
  }
  return {
    merchants: rows.map((row) => ({
      merchantId: row.id,
      name: row.name,
      createdAt: row.createdAt.toISOString(),
      tags: tagsByMerchant.get(row.id) ?? [],
    })),
    pagination: buildPagination(page, limit, totals[0]?.total ?? 0),
  };
}
