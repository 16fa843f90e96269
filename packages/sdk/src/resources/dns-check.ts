// The DNS check's shapes, apart from tags.ts: errors.ts needs them and tags.ts needs the errors.

/**
 * Why a DNS check of a tag's record failed: `RECORD_NOT_FOUND` (no CNAME), `WRONG_TARGET` (it ends
 * elsewhere), `NOT_A_CNAME` (the name answers A/AAAA: flattened or proxied), `WILDCARD_RECORD` (a
 * random name under the domain reaches the target too), `CNAME_CHAIN_TOO_LONG` (more than 4 CNAMEs
 * or a loop), `RESOLVER_UNAVAILABLE` (DNS did not answer: retry later).
 */
export type DnsCheckReason =
  | 'RECORD_NOT_FOUND'
  | 'WRONG_TARGET'
  | 'NOT_A_CNAME'
  | 'WILDCARD_RECORD'
  | 'CNAME_CHAIN_TOO_LONG'
  | 'RESOLVER_UNAVAILABLE';

/** One DNS record a check saw. */
export interface DnsRecordSeen {
  type: 'CNAME' | 'A' | 'AAAA';
  /** Owner name of the record. */
  name: string;
  /** A host name or an address. */
  value: string;
}

/** The record a tag needs, fully qualified. */
export interface ExpectedDnsRecord {
  type: 'CNAME';
  /** Fully qualified record name, e.g. `edge-k3j9x2.shop-example.com`. */
  name: string;
  /** The tag's own CNAME target. */
  value: string;
}

/** `APIError.details` of a failed verification (422, or 503 when DNS did not answer). */
export interface DnsCheckDetails {
  reason: DnsCheckReason;
  expected: ExpectedDnsRecord;
  /** The records seen (empty when none). */
  found: DnsRecordSeen[];
  /** ISO 8601, UTC. */
  checkedAt: string;
}
