import { z } from 'zod';
import { Timestamp } from './common.js';

/**
 * Why a DNS check of a tag's record failed (docs/decisions/dns-verification.md):
 * - `RECORD_NOT_FOUND`: the record name has no CNAME (NXDOMAIN or no data).
 * - `WRONG_TARGET`: the CNAME (or the chain it starts) ends somewhere other than the tag's target.
 * - `NOT_A_CNAME`: the name answers A/AAAA records of its own (a flattened or proxied record).
 * - `WILDCARD_RECORD`: a random name under the domain also reaches the target: a wildcard proves nothing.
 * - `CNAME_CHAIN_TOO_LONG`: the chain has more than 4 CNAMEs (or loops) before reaching the target.
 * - `RESOLVER_UNAVAILABLE`: DNS did not answer in time or failed (SERVFAIL, REFUSED): retry later.
 */
export const DnsCheckReason = z
  .enum([
    'RECORD_NOT_FOUND',
    'WRONG_TARGET',
    'NOT_A_CNAME',
    'WILDCARD_RECORD',
    'CNAME_CHAIN_TOO_LONG',
    'RESOLVER_UNAVAILABLE',
  ])
  .meta({ id: 'DnsCheckReason', description: 'Why the DNS check failed.', example: 'RECORD_NOT_FOUND' });
export type DnsCheckReason = z.infer<typeof DnsCheckReason>;

/** One DNS record seen by a check. */
export const DnsRecordSeen = z
  .object({
    type: z.enum(['CNAME', 'A', 'AAAA']).meta({ description: 'Record type.', example: 'CNAME' }),
    name: z.string().meta({ description: 'Owner name of the record.', example: 'edge-k3j9x2.shop-example.com' }),
    value: z.string().meta({ description: 'Its data: a host name or an address.', example: 'elsewhere.example.net' }),
  })
  .meta({ id: 'DnsRecordSeen' });
export type DnsRecordSeen = z.infer<typeof DnsRecordSeen>;

/** The record a tag needs, fully qualified. */
export const ExpectedDnsRecord = z
  .object({
    type: z.literal('CNAME'),
    name: z.string().meta({ description: 'Fully qualified record name.', example: 'edge-k3j9x2.shop-example.com' }),
    value: z
      .string()
      .meta({ description: 'The CNAME target of this tag.', example: 'q7w2e9r4t6y1.tags.partner-tags.example' }),
  })
  .meta({ id: 'ExpectedDnsRecord' });
export type ExpectedDnsRecord = z.infer<typeof ExpectedDnsRecord>;

/** `details` of a failed DNS verification (422 VALIDATION_ERROR or 503 EXTERNAL_SERVICE_ERROR). */
export const DnsCheckDetails = z
  .object({
    reason: DnsCheckReason,
    expected: ExpectedDnsRecord,
    found: z.array(DnsRecordSeen).meta({ description: 'The records seen (empty when none).' }),
    checkedAt: Timestamp,
  })
  .meta({ id: 'DnsCheckDetails', description: 'What a DNS check expected and found.' });
export type DnsCheckDetails = z.infer<typeof DnsCheckDetails>;

/** The last DNS check of a tag, by a verify call or the background monitor. */
export const TagCheck = z
  .object({
    checkedAt: Timestamp,
    ok: z.boolean().meta({ description: 'The record was right.' }),
    reason: DnsCheckReason.optional(),
    found: z.array(DnsRecordSeen),
  })
  .meta({ id: 'TagCheck' });
export type TagCheck = z.infer<typeof TagCheck>;
