import type { Tag } from '@partner/shared-schemas';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants, tags } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { TagsGone } from '../merchants/delete-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { toTagView } from './tag-view.js';

export interface TagConsentChange {
  tagId: string;
  consentMode?: Tag['consentMode'] | undefined;
  respectGpc?: boolean | undefined;
  cookieless?: boolean | undefined;
}

/** `PATCH /v1/partners/tag/{tagId}`: sets the consent settings given and answers the tag as GET does. */
export async function updateTag(
  db: Database,
  partner: AuthenticatedPartner,
  config: { tagTargetHost: string },
  tagsGone: TagsGone,
  change: TagConsentChange,
): Promise<Tag> {
  const set: Partial<Pick<typeof tags.$inferInsert, 'consentMode' | 'respectGpc' | 'cookieless'>> = {};
  if (change.consentMode !== undefined) set.consentMode = change.consentMode;
  if (change.respectGpc !== undefined) set.respectGpc = change.respectGpc;
  if (change.cookieless !== undefined) set.cookieless = change.cookieless;
  if (Object.keys(set).length === 0) {
    throw new AppError('VALIDATION_ERROR', 'Invalid request: consentMode, respectGpc or cookieless is required');
  }
  const owned = db
    .select({ id: merchants.id })
    .from(merchants)
    .where(and(eq(merchants.partnerId, partner.id), isNull(merchants.deletedAt)));
  const [row] = await db
    .update(tags)
    .set(set)
    .where(and(eq(tags.id, change.tagId), inArray(tags.merchantId, owned)))
    .returning();
  if (!row) throw new AppError('TAG_NOT_FOUND', `No tag ${change.tagId}`);
  tagsGone.gone([row.id]);
  return toTagView(row, partner, config.tagTargetHost);
}
