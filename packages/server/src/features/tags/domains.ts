import { randomBytes } from 'node:crypto';
import type { DomainType } from '@partner/shared-schemas';
import { parse } from 'tldts';
import { AppError } from '../../kernel/errors.js';

const TLDTS_OPTIONS = { allowPrivateDomains: true } as const;

/** True when `domain` is the partner's domain or lies under it. */
export function isUnderDomain(domain: string, partnerDomain: string): boolean {
  return domain === partnerDomain || domain.endsWith(`.${partnerDomain}`);
}

/** Top-level names reserved for documentation and testing. */
export const RESERVED_TLDS: ReadonlySet<string> = new Set(['example', 'test']);

/** The registrable root of a host name by the public suffix list, or null. */
export function rootDomainOf(host: string): string | null {
  const parsed = parse(host, TLDTS_OPTIONS);
  if (parsed.isIcann || parsed.isPrivate) return parsed.domain;
  // `pt.shop.example` is under `shop.example`: without this the collector's CORS and cookie fell
  // back to the collector host itself and refused the merchant's own pages.
  const labels = host.split('.');
  if (labels.length >= 2 && labels.every(Boolean) && RESERVED_TLDS.has(labels[labels.length - 1] as string)) {
    return labels.slice(-2).join('.');
  }
  return null;
}

/** Decides the domain type: preverified at or under the partner's domain; otherwise custom, a registrable root. */
export function classifyDomain(domain: string, partnerDomain: string): DomainType {
  if (isUnderDomain(domain, partnerDomain)) return 'preverified';
  const parsed = parse(domain, TLDTS_OPTIONS);
  if (!parsed.isIcann && !parsed.isPrivate) {
    throw new AppError('VALIDATION_ERROR', `domain: ${domain} does not end in a known public suffix`);
  }
  if (parsed.domain === null) {
    throw new AppError('VALIDATION_ERROR', `domain: ${domain} is a public suffix, not a registrable domain`);
  }
  if (parsed.domain !== domain) {
    throw new AppError(
      'VALIDATION_ERROR',
      `domain: must be a root domain; ${domain} is a sub-domain of ${parsed.domain} (send ${parsed.domain})`,
    );
  }
  return 'custom';
}

/** A fresh CNAME label: `edge-` and six random base-36 characters. */
export function newRecordLabel(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(6);
  let label = 'edge-';
  for (const byte of bytes) label += alphabet[byte % alphabet.length];
  return label;
}
