import { EventNamesFilter, type StatsSummaryResponse } from '@partner/shared-schemas';
import type { ReadDb } from '../../db/read-routing.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { foldPendingStatsOf } from './fold.js';
import { previousRange, type StatsRange, statsRange } from './range.js';
import { readSeries } from './series.js';

export interface StatsSummaryParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  compare?: 'previous' | undefined;
}

const rangeOf = (r: StatsRange) => ({ startDate: r.startDate, endDate: r.endDate, timezone: r.timezone });

/** A merchant's totals over a range of local dates (and, asked, over the period before it). */
export async function statsSummary(
  reads: ReadDb,
  partner: AuthenticatedPartner,
  params: StatsSummaryParams,
): Promise<StatsSummaryResponse> {
  const names = EventNamesFilter.parse(params.events);
  await findOwnMerchant(reads.primary, partner, params.merchantId);
  // The fold writes: on the primary; the aggregates are read where it has been replayed (db/read-routing.ts).
  await foldPendingStatsOf(reads.primary, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const before = params.compare === 'previous' ? previousRange(range) : null;
  const [totals, previous] = await reads.run(
    'stats',
    (db) =>
      Promise.all([
        readSeries(db, params.merchantId, [range.start], range.end, names, reads.primary),
        before ? readSeries(db, params.merchantId, [before.start], before.end, names, reads.primary) : null,
      ]),
    { caughtUp: true },
  );
  return {
    range: rangeOf(range),
    totals: totals[0]!,
    previous: before && previous ? { range: rangeOf(before), totals: previous[0]! } : null,
  };
}
