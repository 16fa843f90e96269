import type { DnsRecord } from '@partner/shared-schemas';

const RECORD_TTL_SECONDS = 300;

/** The CNAME a domain owner publishes: `<recordName>.<domain>` -> the tag target host. */
export function cnameRecord(recordName: string, targetHost: string): DnsRecord {
  return { type: 'CNAME', name: recordName, value: targetHost, ttl: RECORD_TTL_SECONDS };
}
