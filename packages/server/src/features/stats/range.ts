import { statsDayNumber } from '@partner/shared-schemas';
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
  return {
    startDate,
    endDate,
    timezone,
    firstDay,
    lastDay,
    start: localMidnight(timezone, firstDay),
    end: localMidnight(timezone, lastDay + 1),
  };
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
