import type { DeleteTagResponse } from '@partner/shared-schemas';
import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants, tags } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { TagsGone } from '../merchants/delete-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { enqueueWebhookEvent } from '../webhooks/outbox.js';
import { toTagView } from './tag-view.js';

/** `DELETE /v1/partners/tag/{tagId}`: the row goes, with `tag.deleted` (the tag as it was) in the same transaction. */
export async function deleteTag(
  db: Database,
  partner: AuthenticatedPartner,
  config: { tagTargetHost: string },
  tagsGone: TagsGone,
  tagId: string,
): Promise<DeleteTagResponse> {
  await db.transaction(async (tx) => {
    const [row] = await tx
      .select({ tag: tags })
      .from(tags)
      .innerJoin(merchants, eq(merchants.id, tags.merchantId))
      .where(and(eq(tags.id, tagId), eq(merchants.partnerId, partner.id), isNull(merchants.deletedAt)))
      .limit(1)
      .for('update', { of: tags });
    if (!row) throw new AppError('TAG_NOT_FOUND', `No tag ${tagId}`);
    await tx.delete(tags).where(eq(tags.id, tagId));
    await enqueueWebhookEvent(tx, {
      partnerId: partner.id,
      type: 'tag.deleted',
      data: toTagView(row.tag, partner, config.tagTargetHost) as unknown as Record<string, unknown>,
    });
  });
  tagsGone.gone([tagId]);
  return { tagId, deleted: true };
}
