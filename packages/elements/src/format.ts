// Numbers, money, changes and date ranges as the dashboard shows them (en-US, as the API's words).

/** The periods the range picker offers, in days ending today. */
export const PERIODS = [7, 30, 90] as const;

const counts = new Intl.NumberFormat('en-US');
const percent = new Intl.NumberFormat('en-US', {
  style: 'percent',
  maximumFractionDigits: 1,
  minimumFractionDigits: 1,
  signDisplay: 'always',
});

export const formatCount = (value: number): string => counts.format(value);

/** `amount` is the API's exact decimal string; shown with its currency's symbol when known. */
export function formatMoney(amount: string, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${amount} ${currency}`;
  }
}

export interface Change {
  text: string;
  direction: 'up' | 'down' | 'flat';
}

/** "+12.5%" against the previous period; "new this period" or "no change" when it had nothing. */
export function change(current: number, previous: number): Change {
  if (previous === 0) {
    return current === 0 ? { text: 'no change', direction: 'flat' } : { text: 'new this period', direction: 'up' };
  }
  const ratio = (current - previous) / previous;
  return { text: percent.format(ratio), direction: ratio > 0 ? 'up' : ratio < 0 ? 'down' : 'flat' };
}

/** `YYYY-MM-DD` of `date` in `timeZone`. */
function localDate(date: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
}

/** The `days` local dates ending today, as the stats calls take them. */
export function lastDays(days: number, timeZone: string, now = new Date()): { startDate: string; endDate: string } {
  const endDate = localDate(now, timeZone);
  const start = new Date(`${endDate}T00:00:00Z`);
  start.setUTCDate(start.getUTCDate() - (days - 1));
  return { startDate: start.toISOString().slice(0, 10), endDate };
}

/** Days in an inclusive `YYYY-MM-DD` range. */
export function dayCount(startDate: string, endDate: string): number {
  return Math.round((Date.parse(`${endDate}T00:00:00Z`) - Date.parse(`${startDate}T00:00:00Z`)) / 86_400_000) + 1;
}

/** The browser's zone, or UTC where it has none. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
