import { randomBytes } from 'node:crypto';
import type { DnsCheckDetails, DnsCheckReason, DnsRecordSeen, ExpectedDnsRecord } from '@partner/shared-schemas';
import { DnsUnavailableError } from '../../kernel/lookup-errors.js';
import type { AnswerRecord, DnsResolver } from '../../runtime/dns-resolver.js';

/** CNAMEs followed from the record name before giving up (docs/decisions/dns-verification.md, "CNAME chains"). */
const MAX_CNAME_CHAIN = 4;

/** The columns a check needs. */
export interface CheckedTag {
  recordName: string;
  domain: string;
  targetLabel: string | null;
}

/** The outcome of one DNS check of a tag's record: the `details` of a failure, plus `ok` and a message. */
export interface DnsCheck extends Omit<DnsCheckDetails, 'reason'> {
  ok: boolean;
  /** Set when the check failed. */
  reason?: DnsCheckReason;
  /** Human explanation (the error message of a failed verify). */
  message: string;
}

/** The CNAME a custom tag needs, fully qualified: `<record>.<domain>` -> its own target. */
export function expectedRecordOf(tag: CheckedTag, targetHost: string): ExpectedDnsRecord {
  return {
    type: 'CNAME',
    name: `${tag.recordName}.${tag.domain}`,
    value: tag.targetLabel ? `${tag.targetLabel}.${targetHost}` : targetHost,
  };
}

/** A fresh per-tag target label: 12 random base-36 characters (62 bits). */
export function newTargetLabel(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let label = '';
  for (const byte of randomBytes(12)) label += alphabet[byte % alphabet.length];
  return label;
}

type Walk =
  | { kind: 'reached'; chain: AnswerRecord[] }
  /** The chain ended at `end` (no CNAME there, or a name under the target host that is not ours). */
  | { kind: 'ended'; end: string; chain: AnswerRecord[] }
  | { kind: 'too-long'; chain: AnswerRecord[] };

interface Budget {
  deadline: number;
  perQuery: number;
}

function remaining(budget: Budget): number {
  const left = Math.min(budget.perQuery, budget.deadline - Date.now());
  if (left <= 0) throw new DnsUnavailableError('ETIMEOUT');
  return left;
}

/** Follows CNAMEs from `start`, one query per hop, taking only records whose owner name is the name asked. */
async function walk(
  dns: DnsResolver,
  start: string,
  isTarget: (name: string) => boolean,
  stops: (name: string) => boolean,
  budget: Budget,
  seen: AnswerRecord[],
): Promise<Walk> {
  const chain: AnswerRecord[] = [];
  const visited = new Set([start]);
  let name = start;
  for (let hop = 0; hop < MAX_CNAME_CHAIN; hop++) {
    const answer = await dns.query(name, 'CNAME', remaining(budget));
    seen.push(...answer.records);
    const own = answer.records.find((record) => record.type === 'CNAME' && record.name === name);
    if (!own) return { kind: 'ended', end: name, chain };
    chain.push(own);
    if (isTarget(own.value)) return { kind: 'reached', chain };
    if (stops(own.value)) return { kind: 'ended', end: own.value, chain };
    if (visited.has(own.value)) return { kind: 'too-long', chain };
    visited.add(own.value);
    name = own.value;
  }
  return { kind: 'too-long', chain };
}

const describeChain = (chain: AnswerRecord[]) => chain.map((r) => `${r.name} -> ${r.value}`).join(', ');

function unique(records: AnswerRecord[]): DnsRecordSeen[] {
  const out = new Map<string, DnsRecordSeen>();
  for (const r of records) out.set(`${r.type} ${r.name} ${r.value}`, { type: r.type, name: r.name, value: r.value });
  return [...out.values()];
}

const PROPAGATION = 'DNS changes can take from a few minutes up to 48 hours to propagate.';

/**
 * Checks a custom tag's record in DNS (docs/decisions/dns-verification.md):
 * 1. `<record>.<domain>` must be a CNAME to the tag's own target, directly or through at most
 *    MAX_CNAME_CHAIN CNAMEs, each answer owned by the name asked;
 * 2. a random name under the domain must NOT reach the target host (a wildcard proves nothing).
 * Never throws for DNS reasons: a resolver failure is the result `RESOLVER_UNAVAILABLE`. The whole
 * check (probe in parallel) is bounded by twice the resolver's budget.
 */
export async function checkTagRecord(dns: DnsResolver, tag: CheckedTag, targetHost: string): Promise<DnsCheck> {
  const expected = expectedRecordOf(tag, targetHost);
  const underTargetHost = (name: string) => name === targetHost || name.endsWith(`.${targetHost}`);
  const budget: Budget = { deadline: Date.now() + 2 * dns.timeoutMs, perQuery: dns.timeoutMs };
  const seen: AnswerRecord[] = [];
  const probeSeen: AnswerRecord[] = [];
  const probeName = `pt-probe-${newTargetLabel()}.${tag.domain}`;
  const result = (
    ok: boolean,
    reason: DnsCheckReason | undefined,
    message: string,
    found: AnswerRecord[],
  ): DnsCheck => ({
    ok,
    ...(reason ? { reason } : {}),
    message,
    expected,
    found: unique(found),
    checkedAt: new Date().toISOString(),
  });

  // The wildcard probe runs beside the record check; its answer matters only when the record is right.
  const probe = walk(dns, probeName, underTargetHost, () => false, budget, probeSeen);
  probe.catch(() => {});
  try {
    const record = await walk(dns, expected.name, (n) => n === expected.value, underTargetHost, budget, seen);
    if (record.kind === 'too-long') {
      return result(
        false,
        'CNAME_CHAIN_TOO_LONG',
        `DNS verification failed: expected ${expected.name} -> ${expected.value}, found a chain of more than ` +
          `${MAX_CNAME_CHAIN} CNAMEs or a loop (${describeChain(record.chain)}). Point the record at the target directly.`,
        seen,
      );
    }
    if (record.kind === 'ended' && record.chain.length > 0) {
      return result(
        false,
        'WRONG_TARGET',
        `DNS verification failed: expected ${expected.name} -> ${expected.value}, found ${describeChain(record.chain)}`,
        seen,
      );
    }
    if (record.kind === 'ended') {
      const left = remaining(budget);
      const [a, aaaa] = await Promise.all([
        dns.query(expected.name, 'A', left),
        dns.query(expected.name, 'AAAA', left),
      ]);
      const addresses = [...a.records, ...aaaa.records].filter(
        (r) => (r.type === 'A' || r.type === 'AAAA') && r.name === expected.name,
      );
      seen.push(...a.records, ...aaaa.records);
      if (addresses.length > 0) {
        return result(
          false,
          'NOT_A_CNAME',
          `DNS verification failed: expected a CNAME record ${expected.name} -> ${expected.value}, found address ` +
            `records (${addresses.map((r) => `${r.type} ${r.value}`).join(', ')}): the record is flattened or proxied; ` +
            'publish it as a plain CNAME (DNS only).',
          seen,
        );
      }
      return result(
        false,
        'RECORD_NOT_FOUND',
        `DNS verification failed: expected a CNAME record ${expected.name} -> ${expected.value}, found no CNAME record. ${PROPAGATION}`,
        seen,
      );
    }
    const wildcard = await probe;
    if (wildcard.kind === 'reached') {
      return result(
        false,
        'WILDCARD_RECORD',
        `DNS verification failed: ${probeName}, a random name under ${tag.domain}, also points at ` +
          `${wildcard.chain.at(-1)?.value}: a wildcard record cannot prove the domain. Publish ${expected.name} -> ` +
          `${expected.value} as a record of its own and point the wildcard elsewhere.`,
        [...seen, ...probeSeen],
      );
    }
    return result(true, undefined, 'verified', seen);
  } catch (error) {
    if (!(error instanceof DnsUnavailableError)) throw error;
    return result(
      false,
      'RESOLVER_UNAVAILABLE',
      `DNS verification service unavailable (${error.detail}); retry later`,
      seen,
    );
  }
}
