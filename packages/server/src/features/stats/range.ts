import { statsDayNumber } from '@partner/shared-schemas';
import { AppError } from '../../kernel/errors.js';
import { dateOfDay, localMidnight } from './zone.js';

export type Interval = 'hour' | 'day' | 'week' | 'month';

/** An inclusive range of local dates in a zone, as the instants [start, end). */
export interface StatsRange {
  startDate: string;
  endDate: string;
  timezone: string;
  firstDay: number;
  lastDay: number;
  start: number;
  end: number;
}

export function statsRange(startDate: string, endDate: string, timezone: string): StatsRange {
  const firstDay = statsDayNumber(startDate)!;
  const lastDay = statsDayNumber(endDate)!;
  const start = onQuarterHours(localMidnight(timezone, firstDay), 'startDate', timezone);
  const end = onQuarterHours(localMidnight(timezone, lastDay + 1), 'endDate', timezone);
  return { startDate, endDate, timezone, firstDay, lastDay, start, end };
}

const QUARTER = 900_000;

/**
 * The statistics place instants on a 15-minute grid: a zone whose offset was not whole quarter
 * hours (Africa/Monrovia before 1972, Pacific/Kiritimati before 1979) is refused on such a date.
 */
function onQuarterHours(instant: number, what: 'startDate' | 'endDate', timezone: string): number {
  if (instant % QUARTER === 0) return instant;
  throw new AppError(
    'VALIDATION_ERROR',
    `Invalid request: ${what}: the statistics cannot place this date in ${timezone} (its UTC offset then was not whole quarter hours)`,
  );
}

/** The period of equal length just before `range`. */
export function previousRange(range: StatsRange): StatsRange {
  const days = range.lastDay - range.firstDay + 1;
  return statsRange(dateOfDay(range.firstDay - days), dateOfDay(range.firstDay - 1), range.timezone);
}

/**
 * The starts of the range's points: every local hour, day, week (from Monday) or month, the first
 * at the range's start. Days come from local midnights, so a DST day is 23 or 25 hours long.
 */
export function pointStarts(range: StatsRange, interval: Interval): number[] {
  const starts: number[] = [];
  if (interval === 'hour') {
    for (let t = range.start; t < range.end; t += 3_600_000) starts.push(t);
    return starts;
  }
  for (let day = range.firstDay; day <= range.lastDay; day++) {
    const date = new Date(day * 86_400_000);
    const isStart =
      day === range.firstDay ||
      interval === 'day' ||
      (interval === 'week' && date.getUTCDay() === 1) ||
      (interval === 'month' && date.getUTCDate() === 1);
    if (isStart) starts.push(localMidnight(range.timezone, day));
  }
  return starts;
}
