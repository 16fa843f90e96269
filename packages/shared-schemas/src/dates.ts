/**
 * Zod-free parsing of the ISO 8601 values the API accepts. Everything is UTC: a date-time without
 * an offset is read as UTC, and a date-only value is a whole UTC day.
 */

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

/** Midnight UTC of a calendar day; `setUTCFullYear` because `Date.UTC` reads years 0-99 as 1900-1999. */
function utcDay(y: number, m: number, d: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  return date;
}

function validYmd(y: number, m: number, d: number): boolean {
  const date = utcDay(y, m, d);
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * The instants every API value must fall in once its offset is applied: years 0001-9999 UTC. It is
 * what PostgreSQL's timestamptz takes from `Date.toISOString()` (past 9999 that writes `+010000-…`,
 * year 0 does not exist in PostgreSQL), so an accepted value can never make a write or a filter fail
 * in the database. `9999-12-31T23:59:00-23:59` is a valid ISO 8601 string but year 10000 in UTC.
 */
export const MIN_INSTANT_MS = utcDay(1, 1, 1).getTime();
export const MAX_INSTANT_MS = utcDay(9999, 12, 31).getTime() + 86_400_000 - 1;

/** True when `ms` is an instant of the accepted window (years 0001-9999 UTC). */
export function isStorableInstant(ms: number): boolean {
  return ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
}

/** Why a value is not an accepted instant: not ISO 8601, or outside years 0001-9999 UTC. */
export type IsoInstantProblem = 'format' | 'range';

/** What a validation message says about the window. */
export const INSTANT_RANGE_MESSAGE = 'must fall within years 0001-9999 in UTC (after its offset is applied)';

/** True when `value` is a date-only ISO 8601 string (`2026-11-22`). */
export function isDateOnly(value: string): boolean {
  return DATE_ONLY.test(value);
}

/**
 * Parses `YYYY-MM-DD` or an ISO 8601 date-time (offset optional, UTC assumed). `null` when invalid
 * or outside years 0001-9999 UTC (`MIN_INSTANT_MS`..`MAX_INSTANT_MS`).
 */
export function parseIsoInstant(value: string): Date | null {
  const read = readIsoInstant(value);
  return read instanceof Date ? read : null;
}

/** `parseIsoInstant`, saying why a value is refused (for validation messages). */
export function readIsoInstant(value: string): Date | IsoInstantProblem {
  const instant = parseUnbounded(value);
  if (instant === null) return 'format';
  return isStorableInstant(instant.getTime()) ? instant : 'range';
}

function parseUnbounded(value: string): Date | null {
  const canonical = parseCanonical(value);
  if (canonical !== undefined) return canonical;
  const dateOnly = DATE_ONLY.exec(value);
  if (dateOnly) {
    const [y, m, d] = [Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3])];
    return validYmd(y, m, d) ? utcDay(y, m, d) : null;
  }
  const dt = DATE_TIME.exec(value);
  if (!dt) return null;
  const [y, m, d, hh, mm, ss] = [dt[1], dt[2], dt[3], dt[4], dt[5], dt[6] ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (!validYmd(y, m, d) || hh > 23 || mm > 59 || ss > 59) return null;
  const fraction = dt[7] ? `.${dt[7].slice(0, 3)}` : '';
  const zone = dt[8] ? dt[8].toUpperCase().replace(/^([+-]\d{2})(\d{2})$/, '$1:$2') : 'Z';
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const iso = `${pad(y, 4)}-${pad(m)}-${pad(d)}T${pad(hh)}:${pad(mm)}:${pad(ss)}${fraction}${zone}`;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : new Date(ms);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The value of the two (or more) ASCII digits at `from`; NaN when one is not a digit. */
function digits(value: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const c = value.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return Number.NaN;
    n = n * 10 + c;
  }
  return n;
}

/**
 * The form `toISOString` writes and nearly every client sends, `2026-11-22T10:00:00Z` or
 * `2026-11-22T10:00:00.123Z` with a year of 1000 or more, read without a regular expression or a
 * string built for `Date.parse` (the collector reads one per event; issue 37). `undefined` for any
 * other form (the general parser reads it), `null` for an impossible date or time of this form.
 */
function parseCanonical(value: string): Date | null | undefined {
  const time = canonicalTime(value);
  return typeof time === 'number' ? new Date(time) : time;
}

/**
 * True when `value` is already what `toISOString` writes for it (`2026-11-22T10:00:00.123Z`, a
 * real instant): the collector keeps such a time as sent instead of building a Date per event.
 */
export function isCanonicalInstant(value: string): boolean {
  return value.length === 24 && typeof canonicalTime(value) === 'number';
}

/** parseCanonical's reading as epoch milliseconds (years 1000-9999 are always storable). */
function canonicalTime(value: string): number | null | undefined {
  const length = value.length;
  if (length !== 20 && length !== 24) return undefined;
  if (value.charCodeAt(length - 1) !== 90 /* Z */ || value.charCodeAt(10) !== 84 /* T */) return undefined;
  if (value[4] !== '-' || value[7] !== '-' || value[13] !== ':' || value[16] !== ':') return undefined;
  if (length === 24 && value[19] !== '.') return undefined;
  const y = digits(value, 0, 4);
  const m = digits(value, 5, 2);
  const d = digits(value, 8, 2);
  const hh = digits(value, 11, 2);
  const mm = digits(value, 14, 2);
  const ss = digits(value, 17, 2);
  const ms = length === 24 ? digits(value, 20, 3) : 0;
  // A non-digit anywhere (NaN), or a year below 1000 (Date.UTC reads years 0-99 as 19xx): the general parser.
  if (!(y >= 1000 && m >= 0 && d >= 0 && hh >= 0 && mm >= 0 && ss >= 0 && ms >= 0)) return undefined;
  if (m < 1 || m > 12 || d < 1 || hh > 23 || mm > 59 || ss > 59) return null;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (m === 2 && leap ? 29 : (DAYS_IN_MONTH[m - 1] as number))) return null;
  return Date.UTC(y, m - 1, d, hh, mm, ss, ms);
}

/**
 * Resolves a range bound to an instant. `end` bounds are inclusive, so a date-only `end` is moved
 * to the last millisecond of its UTC day.
 */
export function parseDateBound(value: string, bound: 'start' | 'end'): Date | null {
  const instant = parseIsoInstant(value);
  if (!instant) return null;
  if (bound === 'end' && isDateOnly(value)) return new Date(instant.getTime() + 86_400_000 - 1);
  return instant;
}
