import type { DnsCheckReason } from '@partner/shared-schemas';
import { DnsUnavailableError } from '../../kernel/lookup-errors.js';
import type { AnswerRecord, DnsResolver } from '../../runtime/dns-resolver.js';
import { type CheckedTag, expectedRecordOf } from './dns-check.js';

/**
 * Test mode's magic domains: a custom domain whose first label ends in one of these suffixes fails its check with that
 * reason; any other domain verifies.
 */
const SIMULATED_DNS_SUFFIXES: Readonly<Record<string, DnsCheckReason>> = {
  'record-not-found': 'RECORD_NOT_FOUND',
  'wrong-target': 'WRONG_TARGET',
  'not-a-cname': 'NOT_A_CNAME',
  'wildcard-record': 'WILDCARD_RECORD',
  'cname-chain-too-long': 'CNAME_CHAIN_TOO_LONG',
  'resolver-unavailable': 'RESOLVER_UNAVAILABLE',
};

/** The reason a test-mode domain is made to fail with, or null when it verifies. */
function simulatedOutcomeOf(domain: string): DnsCheckReason | null {
  const label = domain.split('.')[0] ?? '';
  for (const [suffix, reason] of Object.entries(SIMULATED_DNS_SUFFIXES)) {
    if (label === suffix || label.endsWith(`-${suffix}`)) return reason;
  }
  return null;
}

/** Documentation-only names and addresses (RFC 2606, 5737): what the simulated answers point at. */
const ELSEWHERE = 'elsewhere.example.net';
const ADDRESS = '192.0.2.10';

/**
 * A resolver that asks no DNS server but answers as a real zone in the suffix's state, so the live check gives
 * the live outcome. `reason` overrides the suffix (a trigger's record taken away or put back).
 */
export function simulatedResolver(
  tag: CheckedTag,
  targetHost: string,
  timeoutMs: number,
  reason: DnsCheckReason | null = simulatedOutcomeOf(tag.domain),
): DnsResolver {
  const expected = expectedRecordOf(tag, targetHost);
  const loop = `loop.${tag.domain}`;
  const cname = (name: string, value: string): AnswerRecord[] => [{ type: 'CNAME', name, value }];
  const answer = (name: string, type: AnswerRecord['type']): AnswerRecord[] => {
    if (type !== 'CNAME') {
      return reason === 'NOT_A_CNAME' && name === expected.name && type === 'A' ? [{ type, name, value: ADDRESS }] : [];
    }
    switch (reason) {
      case null:
        return name === expected.name ? cname(name, expected.value) : [];
      case 'WRONG_TARGET':
        return name === expected.name ? cname(name, ELSEWHERE) : [];
      case 'WILDCARD_RECORD':
        return name.endsWith(`.${tag.domain}`) ? cname(name, expected.value) : [];
      case 'CNAME_CHAIN_TOO_LONG':
        if (name === expected.name) return cname(name, loop);
        return name === loop ? cname(name, expected.name) : [];
      default:
        return [];
    }
  };
  return {
    timeoutMs,
    query: async (name, type) => {
      if (reason === 'RESOLVER_UNAVAILABLE') throw new DnsUnavailableError('SERVFAIL');
      const records = answer(name, type);
      return { rcode: records.length > 0 ? 'NOERROR' : 'NXDOMAIN', records };
    },
  };
}
