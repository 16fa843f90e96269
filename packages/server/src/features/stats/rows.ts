import { createHash } from 'node:crypto';
import { type EventConsent, STATS_NONE_VALUE } from '@partner/shared-schemas';

/** A stored event as the statistics take it: what ingestion committed, with its `seq`. */
export interface StoredEvent {
  merchantId: string;
  seq: number;
  muid: string;
  eventName: string;
  /** ISO 8601 instant. */
  eventTime: string;
  /** The event's `data` as stored (JSON text). */
  rawData: string;
  consent: EventConsent;
}

/** A row of the ClickHouse `events` table (db/clickhouse/migrations/0001_events.sql). */
export interface EventRow {
  merchant_id: string;
  event_time: string;
  visitor: string;
  seq: number;
  event_name: string;
  path: string;
  referrer: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  currency: string;
  revenue: string;
  revenue_scale: number;
  consent: EventConsent;
  livemode: boolean;
}

/** The instants ClickHouse's DateTime64 holds; an event dated outside is not counted. */
const EARLIEST = Date.UTC(1900, 0, 1);
const LATEST = Date.UTC(2300, 0, 1);

const REFERRER_HOST = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/;
const UTM = {
  utm_source: /[?&]utm_source=([^&#]*)/,
  utm_medium: /[?&]utm_medium=([^&#]*)/,
  utm_campaign: /[?&]utm_campaign=([^&#]*)/,
};
const CURRENCY = /^[A-Za-z]{3}$/;
const DECIMAL = /^(-?)([0-9]{1,46})(?:\.([0-9]{1,30}))?$/;

/** The visitor key of a muid: the first 64 bits of its SHA-256, as ClickHouse's UInt64 in decimal. */
export function visitorOf(muid: string): string {
  return createHash('sha256').update(muid).digest().readBigUInt64BE(0).toString();
}

const text = (value: unknown) => (typeof value === 'string' ? value : null);

/** At most 200 characters (code points); `(none)` when absent or empty. */
function dimensionValue(value: string | null): string {
  if (value === null || value === '') return STATS_NONE_VALUE;
  if (value.length <= 200) return value;
  return Array.from(value).slice(0, 200).join('');
}

/** A JSON number's exact decimal text (no exponent): `1e-7` -> `0.0000001`. */
function plainNumber(value: number): string | null {
  if (!Number.isFinite(value)) return null;
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exp] = match;
  const digits = `${whole}${fraction}`;
  const point = (whole as string).length + Number(exp);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A purchase's `value` and `currency` as counted revenue, or null (then only the purchase counts). */
function revenueOf(data: Record<string, unknown>): { currency: string; amount: string; scale: number } | null {
  const currency = text(data.currency);
  if (currency === null || !CURRENCY.test(currency)) return null;
  const raw = typeof data.value === 'number' ? plainNumber(data.value) : text(data.value);
  const match = raw === null ? null : DECIMAL.exec(raw);
  if (!match) return null;
  return { currency: currency.toUpperCase(), amount: raw as string, scale: match[3]?.length ?? 0 };
}

function objectOf(rawData: string): Record<string, unknown> | null {
  try {
    const data: unknown = JSON.parse(rawData);
    return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The typed row of a stored event: page views carry their path, the referrer's host (lower case)
 * and the page URL's utm values (`+` read as a space); purchases their revenue (exact decimal text).
 * Null when the event is dated where ClickHouse cannot place it.
 */
export function eventRowOf(event: StoredEvent, livemode: boolean): EventRow | null {
  const at = Date.parse(event.eventTime);
  if (!(at >= EARLIEST && at < LATEST)) return null;
  const row: EventRow = {
    merchant_id: event.merchantId,
    event_time: new Date(at).toISOString().replace('T', ' ').replace('Z', ''),
    visitor: visitorOf(event.muid),
    seq: event.seq,
    event_name: event.eventName,
    path: '',
    referrer: '',
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    currency: '',
    revenue: '0',
    revenue_scale: 0,
    consent: event.consent,
    livemode,
  };
  if (event.eventName !== 'PageView' && event.eventName !== 'Purchase') return row;
  const data = objectOf(event.rawData);
  if (data === null) return row;
  if (event.eventName === 'Purchase') {
    const revenue = revenueOf(data);
    if (revenue) {
      row.currency = revenue.currency;
      row.revenue = revenue.amount;
      row.revenue_scale = revenue.scale;
    }
    return row;
  }
  const url = text(data.url);
  const referrer = text(data.referrer);
  row.path = dimensionValue(text(data.path));
  row.referrer = dimensionValue(referrer === null ? null : (REFERRER_HOST.exec(referrer)?.[1]?.toLowerCase() ?? null));
  for (const [name, pattern] of Object.entries(UTM) as [keyof typeof UTM, RegExp][]) {
    row[name] = dimensionValue(url === null ? null : (pattern.exec(url)?.[1]?.replaceAll('+', ' ') ?? null));
  }
  return row;
}
