import type { VerifyTagResponse } from '@partner/shared-schemas';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { tags } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import type { DnsResolver } from '../../runtime/dns-resolver.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { checkTagRecord } from './dns-check.js';
import { isUnderDomain, rootDomainOf } from './domains.js';
import { findOwnTag } from './find-own-tag.js';
import { applyCheck, type TagStateConfig } from './lifecycle/tag-state.js';
import { simulatedResolver } from './simulated-dns.js';

/** Checks the custom tag's record in DNS and applies the result like a background check would. */
export async function verifyTag(
  db: Database,
  partner: AuthenticatedPartner,
  dns: DnsResolver,
  config: TagStateConfig,
  input: { tagId: string; subdomain: string },
): Promise<VerifyTagResponse> {
  const tag = await findOwnTag(db, partner, input.tagId);

  if (tag.domainType === 'preverified') {
    // Preverified tags are live from creation: nothing to check in DNS (docs/decisions/dns-verification.md).
    if (!isUnderDomain(input.subdomain, partner.domain)) {
      throw new AppError('VALIDATION_ERROR', `subdomain: ${input.subdomain} is not under ${partner.domain}`);
    }
    // The answer says verified, so the tag says so too (isConnected stays: no DNS was checked).
    if (!tag.isVerified) {
      await db.update(tags).set({ isVerified: true, verifiedAt: sql`now()` }).where(eq(tags.id, tag.id));
    }
    return { verified: true };
  }

  const root = rootDomainOf(input.subdomain);
  if (root !== tag.domain) {
    throw new AppError('VALIDATION_ERROR', `subdomain: ${input.subdomain} is not on this tag's domain ${tag.domain}`);
  }

  // Test mode never asks DNS: the domain's magic suffix decides (docs/decisions/test-mode.md).
  const resolver = partner.livemode ? dns : simulatedResolver(tag, config.tagTargetHost, dns.timeoutMs);
  const check = await checkTagRecord(resolver, tag, config.tagTargetHost);
  await applyCheck(db, config, tag.id, check, { kind: 'verify' });
  if (!check.ok) {
    const { reason = 'RECORD_NOT_FOUND', expected, found, checkedAt } = check;
    throw new AppError(
      reason === 'RESOLVER_UNAVAILABLE' ? 'EXTERNAL_SERVICE_ERROR' : 'DNS_VERIFICATION_FAILED',
      check.message,
      {
        details: { reason, expected, found, checkedAt },
      },
    );
  }
  return { verified: true };
}
