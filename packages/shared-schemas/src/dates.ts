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
