/**
 * Zod-free parsing of the ISO 8601 values the API accepts. Everything is UTC: a date-time without
 * an offset is read as UTC, and a date-only value is a whole UTC day.
 */

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

function validYmd(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** True when `value` is a date-only ISO 8601 string (`2026-11-22`). */
export function isDateOnly(value: string): boolean {
  return DATE_ONLY.test(value);
}

/** Parses `YYYY-MM-DD` or an ISO 8601 date-time (offset optional, UTC assumed). `null` when invalid. */
export function parseIsoInstant(value: string): Date | null {
  const dateOnly = DATE_ONLY.exec(value);
  if (dateOnly) {
    const [y, m, d] = [Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3])];
    return validYmd(y, m, d) ? new Date(Date.UTC(y, m - 1, d)) : null;
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
