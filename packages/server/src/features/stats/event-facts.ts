import { STATS_NONE_VALUE } from '@partner/shared-schemas';

/** Bucket length of every aggregate: 15 minutes, so each zone's local midnight is a bucket edge. */
const BUCKET_MS = 15 * 60_000;
/** Longest dimension value kept (longer ones are cut). */
const VALUE_MAX = 200;
const CURRENCY = /^[A-Za-z]{3}$/;
const DECIMAL = /^-?[0-9]{1,30}(\.[0-9]{1,30})?$/;
const UTM = ['utm_source', 'utm_medium', 'utm_campaign'] as const;

/** The start of the 15-minute UTC bucket of an ISO instant, as ms since the epoch. */
export function bucketOf(eventTime: string): number {
  const ms = Date.parse(eventTime);
  return ms - (((ms % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
}

export interface Revenue {
  currency: string;
  /** Decimal text, summed as `numeric` in the database. */
  amount: string;
}

/** A `Purchase`'s revenue: `value` (a number or decimal string) in `currency` (3 letters); else null. */
export function revenueOf(data: unknown): Revenue | null {
  if (!isObject(data)) return null;
  const { value, currency } = data;
  if (typeof currency !== 'string' || !CURRENCY.test(currency)) return null;
  let amount: string;
  if (typeof value === 'number' && Number.isFinite(value)) amount = String(value);
  else if (typeof value === 'string' && DECIMAL.test(value)) amount = value;
  else return null;
  return { currency: currency.toUpperCase(), amount };
}

/**
 * A `PageView`'s dimension values: `path`, the referrer's host and the page URL's utm_* parameters;
 * an absent one is `(none)`. The migration's backfill applies the same rules in SQL.
 */
export function dimensionsOf(data: unknown): [dimension: string, value: string][] | null {
  if (!isObject(data)) return null;
  const out: [string, string][] = [['path', shown(typeof data.path === 'string' ? data.path : '')]];
  out.push(['referrer', shown(typeof data.referrer === 'string' ? hostOf(data.referrer) : '')]);
  const url = typeof data.url === 'string' ? data.url : '';
  for (const name of UTM) out.push([name, shown(url.includes(`${name}=`) ? paramOf(url, name) : '')]);
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: string): string {
  return value === '' ? STATS_NONE_VALUE : value.slice(0, VALUE_MAX);
}

function hostOf(referrer: string): string {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/.exec(referrer);
  return match ? match[1]!.toLowerCase() : '';
}

function paramOf(url: string, name: string): string {
  const match = new RegExp(`[?&]${name}=([^&#]*)`).exec(url);
  if (!match) return '';
  const raw = match[1]!.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
