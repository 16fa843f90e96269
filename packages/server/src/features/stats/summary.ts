import { EventNamesFilter, type StatsSummaryResponse } from '@partner/shared-schemas';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { noPoint, pointTotals } from './points.js';
import { previousRange, type StatsRange, statsRange } from './range.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';

export interface StatsSummaryParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  filters?: string | undefined;
  compare?: 'previous' | undefined;
}

const rangeOf = (r: StatsRange) => ({ startDate: r.startDate, endDate: r.endDate, timezone: r.timezone });

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
  const scope = { merchantId: params.merchantId, start: before?.start ?? range.start, end: range.end };
  const [points, bots] = await Promise.all([
    stats.points(
      principalOf(partner),
      { ...scope, names, filters: filtersOf(params.filters), cut: { splitAt: range.start } },
      [range.start],
    ),
    stats.botEvents(scope.merchantId, scope.start, range.start, range.end),
  ]);
  const totalsOf = (key: string, botEvents: number) => ({ ...pointTotals(points.get(key) ?? noPoint()), botEvents });
  return {
    range: rangeOf(range),
    totals: totalsOf('1', bots.current),
    previous: before ? { range: rangeOf(before), totals: totalsOf('0', bots.before) } : null,
  };
}
