import type { VerifyTagResponse } from '@partner/shared-schemas';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { tags } from '../../db/schema/index.js';
import type { CnameResolver } from '../../dns/cname-resolver.js';
import { AppError } from '../../errors.js';
import type { AuthenticatedPartner } from '../partner/authenticate.js';
import { canonicalHost, isUnderDomain, rootDomainOf } from './domains.js';
import { findOwnTag } from './find-own-tag.js';

export interface VerifyTagConfig {
  tagTargetHost: string;
}

/**
 * Checks that `<record>.<tag domain>` is a CNAME to the tag target host. Success marks the tag
 * connected and verified and moves it to `waiting_for_events` (an `active` tag stays active);
 * any failure changes nothing.
 */
export async function verifyTag(
  db: Database,
  partner: AuthenticatedPartner,
  dns: CnameResolver,
  config: VerifyTagConfig,
  input: { tagId: string; subdomain: string },
): Promise<VerifyTagResponse> {
  const tag = await findOwnTag(db, partner, input.tagId);

  if (tag.domainType === 'preverified') {
    // Preverified tags are live from creation: nothing to check in DNS (docs/decisions.md).
    if (!isUnderDomain(input.subdomain, partner.domain)) {
      throw new AppError('VALIDATION_ERROR', `subdomain: ${input.subdomain} is not under ${partner.domain}`);
    }
    return { verified: true };
  }

  const root = rootDomainOf(input.subdomain);
  if (root !== tag.domain) {
    throw new AppError('VALIDATION_ERROR', `subdomain: ${input.subdomain} is not on this tag's domain ${tag.domain}`);
  }

  const recordHost = `${tag.recordName}.${tag.domain}`;
  const expected = canonicalHost(config.tagTargetHost);
  const lookup = await dns.resolveCname(recordHost);
  if (!lookup.found) {
    throw new AppError(
      'DNS_VERIFICATION_FAILED',
      `DNS verification failed: expected a CNAME record ${recordHost} -> ${expected}, found no CNAME record. ` +
        'DNS changes can take from a few minutes up to 48 hours to propagate.',
    );
  }
  const found = lookup.targets.map(canonicalHost);
  if (!found.includes(expected)) {
    throw new AppError(
      'DNS_VERIFICATION_FAILED',
      `DNS verification failed: expected ${recordHost} -> ${expected}, found ${recordHost} -> ${found.join(', ')}`,
    );
  }
  await db
    .update(tags)
    .set({
      isConnected: true,
      isVerified: true,
      verifiedAt: sql`now()`,
      status: sql`case when ${tags.status} = 'active' then 'active'::tag_status else 'waiting_for_events'::tag_status end`,
    })
    .where(eq(tags.id, tag.id));
  return { verified: true };
}
