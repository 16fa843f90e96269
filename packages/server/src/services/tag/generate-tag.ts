import { type GenerateTagResponse, TAG_CREATED_MESSAGE, TAG_EXISTING_MESSAGE } from '@partner/shared-schemas';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { tags } from '../../db/schema/index.js';
import { findOwnMerchant } from '../merchant/find-merchant.js';
import type { AuthenticatedPartner } from '../partner/authenticate.js';
import { newTargetLabel } from './dns-check.js';
import { classifyDomain, newRecordLabel } from './domains.js';
import { cnameRecord } from './record.js';
import { restartedRechecks, type TagStateConfig } from './tag-state.js';
import { targetOf } from './tag-view.js';

export type GenerateTagConfig = Pick<TagStateConfig, 'tagTargetHost' | 'schedule'>;

/**
 * Creates the merchant's tag for the domain's type, or returns the one that exists. The unique
 * (merchant_id, domain_type) index decides races: concurrent calls insert at most one row and
 * every caller then reads that row.
 */
export async function generateTag(
  db: Database,
  partner: AuthenticatedPartner,
  config: GenerateTagConfig,
  input: { merchantId: string; domain: string },
): Promise<GenerateTagResponse> {
  const merchant = await findOwnMerchant(db, partner, input.merchantId);
  const domainType = classifyDomain(input.domain, partner.domain);
  const [created] = await db
    .insert(tags)
    .values({
      merchantId: merchant.id,
      domain: input.domain,
      domainType,
      // Preverified tags live behind the partner's onboarding record; custom ones get their own.
      recordName: domainType === 'preverified' ? partner.recordName : newRecordLabel(),
      status: domainType === 'preverified' ? 'active' : 'inactive',
      // A custom tag gets its own CNAME target (a wildcard to one tag's target proves nothing for
      // another) and its first background re-checks (jobs/tag-monitor.ts).
      ...(domainType === 'custom' ? { targetLabel: newTargetLabel(), ...restartedRechecks(config.schedule) } : {}),
    })
    .onConflictDoNothing({ target: [tags.merchantId, tags.domainType] })
    .returning();
  const tag =
    created ??
    (
      await db
        .select()
        .from(tags)
        .where(and(eq(tags.merchantId, merchant.id), eq(tags.domainType, domainType)))
        .limit(1)
    )[0];
  if (!tag) throw new Error('tag vanished between insert and select');
  return {
    tagId: tag.id,
    domain: tag.domain,
    record: cnameRecord(tag.recordName, targetOf(tag, config.tagTargetHost)),
    status: tag.status,
    message: created ? TAG_CREATED_MESSAGE : TAG_EXISTING_MESSAGE,
  };
}
