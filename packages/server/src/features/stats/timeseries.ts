import { EventNamesFilter, type StatsTimeseriesResponse } from '@partner/shared-schemas';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { noPoint, type PointSums, pointTotals } from './points.js';
import { type Interval, pointStarts, statsRange } from './range.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';
import { dateOfDay, isoInZone, localDayOf } from './zone.js';

export interface StatsTimeseriesParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  filters?: string | undefined;
  interval: Interval;
}

/** The point a key of the store falls in: its own, else the last one that starts before it. */
function pointOf(keys: readonly string[], key: string, numeric: boolean): number {
  const before = (a: string, b: string) => (numeric ? Number(a) <= Number(b) : a <= b);
  let found = -1;
  for (let i = 0; i < keys.length && before(keys[i] as string, key); i++) found = i;
  return found;
}

/** One point per local hour, day, week or month of the range, zero-filled. */
export async function statsTimeseries(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: StatsTimeseriesParams,
): Promise<StatsTimeseriesResponse> {
  const names = EventNamesFilter.parse(params.events);
  const stats = await storeFor(deps, partner, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const starts = pointStarts(range, params.interval);
  const hourly = params.interval === 'hour';
  // The store's keys: Unix seconds of a local hour, or the local date a point starts on.
  const keys = starts.map((t) => (hourly ? String(t / 1000) : dateOfDay(localDayOf(range.timezone, t))));
  const found = await stats.points(
    principalOf(partner),
    {
      merchantId: params.merchantId,
      start: range.start,
      end: range.end,
      names,
      filters: filtersOf(params.filters),
      cut: { interval: params.interval, zone: range.timezone, firstDate: range.startDate },
    },
    starts,
  );
  const totals = starts.map(noPoint);
  for (const [key, point] of found) {
    const at = keys.indexOf(key);
    // A key between ours only when the zone's rules differ between ClickHouse and this runtime.
    const i = at >= 0 ? at : pointOf(keys, key, hourly);
    if (i >= 0) totals[i] = at >= 0 ? point : merged(totals[i] as PointSums, point);
  }
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    interval: params.interval,
    points: totals.map((point, i) => ({
      start: isoInZone(range.timezone, starts[i] as number),
      ...pointTotals(point),
    })),
  };
}

function merged(a: PointSums, b: PointSums): PointSums {
  const sum = { ...a };
  for (const key of Object.keys(b) as (keyof PointSums)[]) {
    if (key !== 'revenue') sum[key] = a[key] + b[key];
  }
  sum.revenue = [...a.revenue, ...b.revenue];
  return sum;
}
