// Numbers, money, changes and date ranges as the dashboard shows them (en-US, as the API's words).
import type { StatsTimeseries } from '@partner/sdk';

/** The periods the range picker offers, in days ending today. */
export const PERIODS = [7, 30, 90] as const;

const counts = new Intl.NumberFormat('en-US');
const percent = new Intl.NumberFormat('en-US', {
  style: 'percent',
  maximumFractionDigits: 1,
  minimumFractionDigits: 1,
  signDisplay: 'always',
});

const share = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });
const points = new Intl.NumberFormat('en-US', {
  maximumFractionDigits: 1,
  minimumFractionDigits: 1,
  signDisplay: 'exceptZero',
});

export const formatCount = (value: number): string => counts.format(value);

/** A share of 0..1 as "42.5%". */
export const formatShare = (value: number): string => share.format(value);

/** Seconds as "45s", "3m 05s" or "1h 02m". */
export function formatDuration(seconds: number): string {
  const total = Math.round(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  if (total < 60) return `${total}s`;
  if (total < 3600) return `${Math.floor(total / 60)}m ${two(total % 60)}s`;
  return `${Math.floor(total / 3600)}h ${two(Math.floor(total / 60) % 60)}m`;
}

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

/**
 * A share's change in percentage points ("+3.2 points"); `counted` says whether each period had
 * anything to take a share of (a bounce rate of no visits is no rate).
 */
export function pointsChange(current: number, previous: number, counted: [boolean, boolean]): Change {
  if (!counted[1])
    return counted[0] ? { text: 'new this period', direction: 'up' } : { text: 'no change', direction: 'flat' };
  const diff = Math.round((current - previous) * 1000) / 10;
  if (diff === 0) return { text: 'no change', direction: 'flat' };
  return { text: `${points.format(diff)} points`, direction: diff > 0 ? 'up' : 'down' };
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

/**
 * The index of the point whose interval is not over at `now` (the one `now` falls in; the last
 * one while the range's last day is not over), or -1.
 */
export function currentPoint(series: StatsTimeseries, now = Date.now()): number {
  const { points, range } = series;
  return points.findIndex((point, i) => {
    if (Date.parse(point.start) > now) return false;
    const next = points[i + 1];
    return next ? now < Date.parse(next.start) : localDate(new Date(now), range.timezone) <= range.endDate;
  });
}
