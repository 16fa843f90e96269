import type { DomainType } from '@partner/shared-schemas';

/**
 * The collector host of a tag: the host its CNAME names, where the tag script and `POST /e` are
 * served first-party. A custom tag's own record `<record>.<domain>`; a preverified tag lives
 * behind its partner's onboarding record `<partner record>.<partner domain>`.
 */
export function collectorHostOf(
  tag: { domainType: DomainType; recordName: string; domain: string },
  partner: { recordName: string; domain: string },
): string {
  return tag.domainType === 'custom' ? `${tag.recordName}.${tag.domain}` : `${partner.recordName}.${partner.domain}`;
}

/** The tag script's URL on its collector host (https: a merchant's live pages are served over TLS). */
export function scriptUrlOf(collectorHost: string, tagId: string): string {
  return `https://${collectorHost}/t/${tagId}.js`;
}
