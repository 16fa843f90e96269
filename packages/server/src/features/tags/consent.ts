import { createHash } from 'node:crypto';
import type { EventConsent, TagConsentSignal } from '@partner/shared-schemas';

/** A tag's consent settings as the collector applies them (docs/decisions/consent.md). */
export interface TagConsent {
  mode: 'none' | 'opt-in' | 'opt-out';
  respectGpc: boolean;
  cookieless: boolean;
}

/** What the collector does with a batch of the tag script. */
export interface ConsentDecision {
  /** The state its events are stored under; null: none is stored. */
  state: EventConsent | null;
  /** The visitor's name: the muid cookie (set when absent), the daily hash, or none (nothing stored). */
  visitor: 'cookie' | 'hash' | 'none';
  /** A muid cookie the browser sent is cleared. */
  clearCookie: boolean;
}

const COOKIE = (state: EventConsent): ConsentDecision => ({ state, visitor: 'cookie', clearCookie: false });

/**
 * The collector's side of consent. So a stale cached script never gets a cookie that the tag's current mode does not
 * allow.
 */
export function decideConsent(
  tag: TagConsent,
  signal: TagConsentSignal | undefined,
  gpcHeader: boolean,
): ConsentDecision {
  if (signal === 'denied') return { state: null, visitor: 'none', clearCookie: true };
  const withoutConsent: ConsentDecision = tag.cookieless
    ? { state: 'cookieless', visitor: 'hash', clearCookie: true }
    : { state: null, visitor: 'none', clearCookie: true };
  if (tag.mode === 'none') return tag.cookieless ? withoutConsent : COOKIE('not_required');
  if (signal === 'granted') return COOKIE('granted');
  if (tag.mode === 'opt-in') return withoutConsent;
  if (signal === 'cookieless' || (tag.respectGpc && gpcHeader)) return withoutConsent;
  return COOKIE('implied');
}

/** A cookieless visitor's id: a hash of the day's secret salt, the merchant, the IP address and the user agent. */
export function cookielessVisitor(salt: Buffer, merchantId: string, ip: string, userAgent: string): string {
  return createHash('sha256')
    .update(salt)
    .update(`\u0000${merchantId}\u0000${ip}\u0000${userAgent}`)
    .digest('base64url')
    .slice(0, 32);
}
