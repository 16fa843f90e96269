import type { Tag } from '@partner/shared-schemas';
import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { merchants, partners, type TagRow, tags } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { collectorHostOf } from './collector-host.js';
import { cnameRecord } from './record.js';

/** Tables a tag view is read from: the caller's database or its open transaction. */
type Reader = Pick<Database, 'select'>;

/** The CNAME target of a tag: its own `<targetLabel>.<TAG_TARGET_HOST>`, or TAG_TARGET_HOST for older tags. */
export function targetOf(tag: Pick<TagRow, 'targetLabel'>, targetHost: string): string {
  return tag.targetLabel ? `${tag.targetLabel}.${targetHost}` : targetHost;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** A tag in full, as `GET /v1/partners/tag/{tagId}` answers it and every `tag.*` webhook carries it. */
export function toTagView(
  tag: TagRow,
  partner: Pick<AuthenticatedPartner, 'recordName' | 'domain' | 'livemode'>,
  targetHost: string,
): Tag {
  return {
    tagId: tag.id,
    merchantId: tag.merchantId,
    livemode: partner.livemode,
    hostname: collectorHostOf(tag, partner),
    domain: tag.domain,
    domainType: tag.domainType,
    status: tag.status,
    isConnected: tag.isConnected,
    isVerified: tag.isVerified,
    record: cnameRecord(tag.recordName, targetOf(tag, targetHost)),
    createdAt: tag.createdAt.toISOString(),
    verifiedAt: iso(tag.verifiedAt),
    firstEventAt: iso(tag.firstEventAt),
    lastEventAt: iso(tag.lastEventAt),
    lastCheck: tag.lastCheck ?? null,
    nextCheckAt: iso(tag.nextCheckAt),
    ...consentOf(tag),
  };
}

/** A tag's consent settings, as every tag output carries them. */
export function consentOf(
  tag: Pick<TagRow, 'consentMode' | 'respectGpc' | 'cookieless'>,
): Pick<Tag, 'consentMode' | 'respectGpc' | 'cookieless'> {
  return { consentMode: tag.consentMode, respectGpc: tag.respectGpc, cookieless: tag.cookieless };
}

/** The tag with its partner's id, record label and domain (for the collector host), by id. */
export async function readTagWithPartner(
  db: Reader,
  tagId: string,
): Promise<
  { tag: TagRow; partner: { id: string; recordName: string; domain: string; livemode: boolean } } | undefined
> {
  const [row] = await db
    .select({
      tag: tags,
      partnerId: partners.id,
      recordName: partners.recordName,
      domain: partners.domain,
      livemode: partners.livemode,
    })
    .from(tags)
    .innerJoin(merchants, eq(merchants.id, tags.merchantId))
    .innerJoin(partners, eq(partners.id, merchants.partnerId))
    .where(eq(tags.id, tagId))
    .limit(1);
  return (
    row && {
      tag: row.tag,
      partner: { id: row.partnerId, recordName: row.recordName, domain: row.domain, livemode: row.livemode },
    }
  );
}

/** `GET /v1/partners/tag/{tagId}`: the partner's tag in full. */
export async function getTag(
  db: Database,
  partner: AuthenticatedPartner,
  config: { tagTargetHost: string },
  input: { tagId: string },
): Promise<Tag> {
  const [row] = await db
    .select({ tag: tags })
    .from(tags)
    .innerJoin(merchants, eq(merchants.id, tags.merchantId))
    .where(and(eq(tags.id, input.tagId), eq(merchants.partnerId, partner.id), isNull(merchants.deletedAt)))
    .limit(1);
  if (!row) throw new AppError('TAG_NOT_FOUND', `No tag ${input.tagId}`);
  return toTagView(row.tag, partner, config.tagTargetHost);
}
