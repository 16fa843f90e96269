import { EventNamesFilter, type StatsTimeseriesResponse } from '@partner/shared-schemas';
import type { ReadDb } from '../../db/read-routing.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { foldPendingStatsOf } from './fold.js';
import { type Interval, pointStarts, statsRange } from './range.js';
import { readSeries } from './series.js';
import { isoInZone } from './zone.js';

export interface StatsTimeseriesParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  interval: Interval;
}

/** One point per local hour, day, week or month of the range, zero-filled. */
export async function statsTimeseries(
  reads: ReadDb,
  partner: AuthenticatedPartner,
  params: StatsTimeseriesParams,
): Promise<StatsTimeseriesResponse> {
  const names = EventNamesFilter.parse(params.events);
  await findOwnMerchant(reads.primary, partner, params.merchantId);
  // The fold writes: on the primary; the aggregates are read where it has been replayed (db/read-routing.ts).
  await foldPendingStatsOf(reads.primary, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const starts = pointStarts(range, params.interval);
  const totals = await reads.run(
    'stats',
    (db) => readSeries(db, params.merchantId, starts, range.end, names, reads.primary),
    {
      caughtUp: true,
    },
  );
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    interval: params.interval,
    points: totals.map((point, i) => ({ start: isoInZone(range.timezone, starts[i]!), ...point })),
  };
}
