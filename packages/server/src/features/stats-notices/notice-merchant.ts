import type { AuthenticatedPartner } from '../partners/authenticate.js';

/** A merchant a notice is about, with what its statistics are read as. */
export interface NoticeMerchant {
  merchantId: string;
  partnerId: string;
  /** The partner row's flag (false: the test-mode twin's merchant). */
  livemode: boolean;
  /** Its canonical IANA zone. */
  timezone: string;
}

/**
 * The partner a background notice reads the statistics as: its id is all the reads check (the
 * merchant is the partner's), and their gate counts them as `partner:<id>`, apart from its keys.
 */
export function readerOf(merchant: NoticeMerchant): AuthenticatedPartner {
  return { id: merchant.partnerId, name: '', domain: '', recordName: '', livemode: merchant.livemode };
}

const DAY = 86_400_000;
const dateFormats = new Map<string, Intl.DateTimeFormat>();

/** The local date (`YYYY-MM-DD`) of an instant in `zone`. */
function localDate(zone: string, ms: number): string {
  let format = dateFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
    if (dateFormats.size < 1_000) dateFormats.set(zone, format);
  }
  return format.format(new Date(ms));
}

/** `YYYY-MM-DD` moved by `days`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
}

/** The whole week (Monday to Sunday, local dates) before the one `ms` falls in, in `zone`. */
export function lastWeekOf(zone: string, ms: number): { startDate: string; endDate: string } {
  const today = localDate(zone, ms);
  const weekday = (new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday 0
  const monday = addDays(today, -weekday);
  return { startDate: addDays(monday, -7), endDate: addDays(monday, -1) };
}
