import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants, type TagRow, tags } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';

/** The partner's tag, for the tag operations that take a tagId. */
export async function findOwnTag(db: Database, partner: AuthenticatedPartner, tagId: string): Promise<TagRow> {
  const [row] = await db
    .select({ tag: tags, partnerId: merchants.partnerId })
    .from(tags)
    .innerJoin(merchants, eq(merchants.id, tags.merchantId))
    .where(and(eq(tags.id, tagId), isNull(merchants.deletedAt)))
    .limit(1);
  if (!row) throw new AppError('TAG_NOT_FOUND', `No tag ${tagId}`);
  if (row.partnerId !== partner.id) {
    throw new AppError('ACCESS_DENIED', 'This tag belongs to a merchant of another partner');
  }
  return row.tag;
}
