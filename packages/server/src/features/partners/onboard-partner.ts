import { type DnsRecord, DomainInput } from '@partner/shared-schemas';
import type { Database } from '../../db/client.js';
import { apiKeys, partners } from '../../db/schema/index.js';
import { generateApiKey } from '../../kernel/bearer-tokens.js';
import { AppError } from '../../kernel/errors.js';
import { newRecordLabel } from '../tags/domains.js';
import { cnameRecord } from '../tags/record.js';
import { checkPartnerDomain } from './partner-domain.js';

export interface OnboardedPartner {
  partnerId: string;
  name: string;
  domain: string;
  /** Shown once: only its hash is stored. */
  apiKey: string;
  /** The test-mode twin (docs/decisions/test-mode.md): its `mp_test_` key sees test data only. */
  testPartnerId: string;
  /** Shown once, like `apiKey`. */
  testApiKey: string;
  /** The CNAME the partner publishes once on its own domain; preverified tags live behind it. */
  record: DnsRecord;
}

/** The offline onboarding of spec section 1. */
export async function onboardPartner(
  db: Database,
  input: { name: string; domain: string },
  tagTargetHost: string,
): Promise<OnboardedPartner> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 255) throw new AppError('VALIDATION_ERROR', 'name: must be 1..255 characters');
  const parsed = DomainInput.safeParse(input.domain);
  if (!parsed.success) {
    throw new AppError('VALIDATION_ERROR', `domain: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  const domain = parsed.data;
  // Registrable, not a public suffix, no overlap with another partner's domain (docs/decisions/partners-and-merchants.md).
  await checkPartnerDomain(db, domain);

  const key = generateApiKey('live');
  const testKey = generateApiKey('test');
  const recordName = newRecordLabel();
  const ids = await db.transaction(async (tx) => {
    const [partner] = await tx.insert(partners).values({ name, domain, recordName }).returning({ id: partners.id });
    if (!partner) throw new Error('partner insert returned no row');
    const [twin] = await tx
      .insert(partners)
      .values({ name, domain, recordName, livemode: false, livePartnerId: partner.id })
      .returning({ id: partners.id });
    if (!twin) throw new Error('test-mode twin insert returned no row');
    await tx.insert(apiKeys).values([
      { partnerId: partner.id, keyHash: key.hash, keyPrefix: key.prefix },
      { partnerId: twin.id, keyHash: testKey.hash, keyPrefix: testKey.prefix },
    ]);
    return { live: partner.id, test: twin.id };
  });
  return {
    partnerId: ids.live,
    name,
    domain,
    apiKey: key.key,
    testPartnerId: ids.test,
    testApiKey: testKey.key,
    record: cnameRecord(recordName, tagTargetHost),
  };
}
