import { sql } from 'drizzle-orm';
import { parse } from 'tldts';
import type { Database } from '../../db/client.js';
import { partners } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import { RESERVED_TLDS } from '../tags/domains.js';

/**
 * Why `domain` (already a well-formed, lower-cased DomainInput) cannot be a partner's domain, or
 * null. A partner's domain makes every name under it "preverified" for that partner (its tags are
 * active without any DNS proof), so it must be a name one party can own:
 * - not a public suffix (`co.uk`, `com`, `github.io`: the list's private part included);
 * - registrable: ending in a known public suffix (or one of RESERVED_TLDS), not an address;
 * - not inside another partner's domain, nor a parent of one (checked by `checkPartnerDomain`).
 */
function partnerDomainRuleBroken(domain: string): string | null {
  const parsed = parse(domain, { allowPrivateDomains: true });
  if (parsed.isIp) return `domain: ${domain} is an address, not a registrable domain`;
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  const known = parsed.isIcann === true || parsed.isPrivate === true;
  if (!known && !RESERVED_TLDS.has(tld)) {
    return `domain: ${domain} does not end in a known public suffix, so it is not a registrable domain`;
  }
  if (known && (parsed.domain === null || parsed.publicSuffix === domain)) {
    return `domain: ${domain} is a public suffix (anyone can register names under it), not a registrable domain`;
  }
  if (!known && !domain.includes('.')) return `domain: ${domain} is a top-level name, not a registrable domain`;
  return null;
}

/** Throws VALIDATION_ERROR naming the rule when `domain` cannot be a new partner's domain. */
export async function checkPartnerDomain(db: Database, domain: string): Promise<void> {
  const broken = partnerDomainRuleBroken(domain);
  if (broken) throw new AppError('VALIDATION_ERROR', broken);
  const [overlap] = await db
    .select({ domain: partners.domain })
    .from(partners)
    .where(
      sql`${partners.domain} = ${domain}::text
        or right(${domain}::text, length(${partners.domain}) + 1) = '.' || ${partners.domain}
        or right(${partners.domain}, ${domain.length + 1}) = ${`.${domain}`}`,
    )
    .limit(1);
  if (!overlap) return;
  if (overlap.domain === domain) {
    throw new AppError('VALIDATION_ERROR', `domain: a partner with domain ${domain} already exists`);
  }
  if (domain.endsWith(`.${overlap.domain}`)) {
    throw new AppError('VALIDATION_ERROR', `domain: ${domain} is inside another partner's domain`);
  }
  throw new AppError('VALIDATION_ERROR', `domain: ${domain} is a parent of another partner's domain`);
}
