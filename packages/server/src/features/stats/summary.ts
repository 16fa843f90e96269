import { EventNamesFilter, type StatsSummaryResponse, type StatsTotals } from '@partner/shared-schemas';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { previousRange, type StatsRange, statsRange } from './range.js';
import { principalOf, type StatsDeps, storeFor } from './reader.js';

export interface StatsSummaryParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  compare?: 'previous' | undefined;
}

const rangeOf = (r: StatsRange) => ({ startDate: r.startDate, endDate: r.endDate, timezone: r.timezone });
const none = (): StatsTotals => ({ events: 0, visitors: 0, pageviews: 0, purchases: 0, revenue: [] });

/** A merchant's totals over a range of local dates (and, asked, over the period before it): one read of both. */
export async function statsSummary(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: StatsSummaryParams,
): Promise<StatsSummaryResponse> {
  const names = EventNamesFilter.parse(params.events);
  const stats = await storeFor(deps, partner, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const before = params.compare === 'previous' ? previousRange(range) : null;
  const points = await stats.points(
    principalOf(partner),
    {
      merchantId: params.merchantId,
      start: before?.start ?? range.start,
      end: range.end,
      names,
      cut: { splitAt: range.start },
    },
    [range.start],
  );
  return {
    range: rangeOf(range),
    totals: points.get('1') ?? none(),
    previous: before ? { range: rangeOf(before), totals: points.get('0') ?? none() } : null,
  };
}
