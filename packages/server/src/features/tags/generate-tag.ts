import { type GenerateTagResponse, TAG_CREATED_MESSAGE, TAG_EXISTING_MESSAGE } from '@partner/shared-schemas';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants, type TagRow, tags } from '../../db/schema/index.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { lockPartnerCaps, type PartnerCaps, refuseAtCap } from '../partners/caps.js';
import { newTargetLabel } from './dns-check.js';
import { classifyDomain, newRecordLabel } from './domains.js';
import { restartedRechecks, type TagStateConfig, type Transaction } from './lifecycle/tag-state.js';
import { cnameRecord } from './record.js';
import { consentOf, targetOf } from './tag-view.js';

export type GenerateTagConfig = Pick<TagStateConfig, 'tagTargetHost' | 'schedule'>;

/** Creates the merchant's tag for the domain's type, or returns the one that exists. */
export async function generateTag(
  db: Database,
  partner: AuthenticatedPartner,
  config: GenerateTagConfig,
  caps: Pick<PartnerCaps, 'maxCustomTags'>,
  input: { merchantId: string; domain: string } & Partial<
    Pick<GenerateTagResponse, 'consentMode' | 'respectGpc' | 'cookieless'>
  >,
): Promise<GenerateTagResponse> {
  const again = await existingOwnTag(db, partner, config, input);
  if (again) return again;
  const merchant = await findOwnMerchant(db, partner, input.merchantId);
  const domainType = classifyDomain(input.domain, partner.domain);
  const existing = () =>
    db
      .select()
      .from(tags)
      .where(and(eq(tags.merchantId, merchant.id), eq(tags.domainType, domainType)))
      .limit(1);
  const insert = (tx: Database | Transaction) =>
    tx
      .insert(tags)
      .values({
        partnerId: partner.id,
        merchantId: merchant.id,
        domain: input.domain,
        domainType,
        // Preverified tags live behind the partner's onboarding record; custom ones get their own.
        recordName: domainType === 'preverified' ? partner.recordName : newRecordLabel(),
        status: domainType === 'preverified' ? 'active' : 'inactive',
        ...consentSettings(input),
        // A custom tag gets its own CNAME target (a wildcard to one tag's target proves nothing for
        // another) and its first background re-checks (jobs/tag-monitor.ts).
        ...(domainType === 'custom' ? { targetLabel: newTargetLabel(), ...restartedRechecks(config.schedule) } : {}),
      })
      .onConflictDoNothing({ target: [tags.merchantId, tags.domainType] })
      .returning();
  // Preverified tags cost no DNS check: no cap, no transaction (one statement, as before).
  const [created] =
    domainType === 'preverified'
      ? await insert(db)
      : await db.transaction(async (tx) => {
          await lockPartnerCaps(tx, partner.id);
          const [own] = await tx
            .select({ id: tags.id })
            .from(tags)
            .where(and(eq(tags.merchantId, merchant.id), eq(tags.domainType, domainType)))
            .limit(1);
          if (own) return [];
          await refuseAtCap(
            tx,
            'MAX_CUSTOM_TAGS_PER_PARTNER',
            caps.maxCustomTags,
            sql`select 1 from tags where partner_id = ${partner.id}::uuid and domain_type = 'custom'`,
          );
          return insert(tx);
        });
  const tag = created ?? (await existing())[0];
  if (!tag) throw new Error('tag vanished between insert and select');
  return generated(tag, partner, config, created !== undefined);
}

function generated(
  tag: TagRow,
  partner: Pick<AuthenticatedPartner, 'livemode'>,
  config: GenerateTagConfig,
  created: boolean,
): GenerateTagResponse {
  return {
    tagId: tag.id,
    domain: tag.domain,
    record: cnameRecord(tag.recordName, targetOf(tag, config.tagTargetHost)),
    status: tag.status,
    // The mode of the key that reached it: a tag belongs to the live partner or its test-mode twin.
    livemode: partner.livemode,
    message: created ? TAG_CREATED_MESSAGE : TAG_EXISTING_MESSAGE,
    ...consentOf(tag),
  };
}

/** A call for a tag the merchant already has. */
async function existingOwnTag(
  db: Database,
  partner: AuthenticatedPartner,
  config: GenerateTagConfig,
  input: { merchantId: string; domain: string },
): Promise<GenerateTagResponse | undefined> {
  let domainType: TagRow['domainType'];
  try {
    domainType = classifyDomain(input.domain, partner.domain);
  } catch {
    return undefined;
  }
  const [row] = await db
    .select({ tag: tags })
    .from(tags)
    .innerJoin(merchants, eq(merchants.id, tags.merchantId))
    .where(
      and(
        eq(tags.merchantId, input.merchantId),
        eq(tags.domainType, domainType),
        eq(merchants.partnerId, partner.id),
        isNull(merchants.deletedAt),
      ),
    )
    .limit(1);
  return row ? generated(row.tag, partner, config, false) : undefined;
}

/** A new tag's consent settings: `opt-in` is cookieless by default, so page views count before an answer. */
function consentSettings(
  input: Partial<Pick<GenerateTagResponse, 'consentMode' | 'respectGpc' | 'cookieless'>>,
): Pick<GenerateTagResponse, 'consentMode' | 'respectGpc' | 'cookieless'> {
  const consentMode = input.consentMode ?? 'none';
  return {
    consentMode,
    respectGpc: input.respectGpc ?? true,
    cookieless: input.cookieless ?? consentMode === 'opt-in',
  };
}
