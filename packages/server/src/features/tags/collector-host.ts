import type { DomainType } from '@partner/shared-schemas';

/** The collector host of a tag. */
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
