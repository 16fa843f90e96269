import { PartnerError } from '../core/errors.js';

/** One formatter per zone: building an `Intl.DateTimeFormat` costs far more than using one. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    try {
      // Gregorian, Latin digits: what `YYYY-MM-DD` means whatever the runtime's default locale.
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone,
        calendar: 'gregory',
        numberingSystem: 'latn',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
      });
    } catch (error) {
      throw new PartnerError(
        `Invalid timezone "${timeZone}": a Date is turned into its calendar date in an IANA zone (e.g. "Europe/Paris")`,
        { cause: error },
      );
    }
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * A stats date as the API takes it (`YYYY-MM-DD`, a local date in `timeZone`): a string is sent as
 * given; a `Date` becomes the calendar date it falls on in `timeZone` (so `new Date()` is "today"
 * where the merchant is, not in the runtime's zone).
 */
export function calendarDate(value: Date | string, timeZone: string, name: string): string {
  if (!(value instanceof Date)) return value;
  if (Number.isNaN(value.getTime())) throw new PartnerError(`Invalid Date given for the \`${name}\` parameter`);
  const parts = formatterFor(timeZone).formatToParts(value);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}
