import { EventNamesFilter, type STATS_DIMENSIONS, type StatsBreakdownResponse } from '@partner/shared-schemas';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { statsRange } from './range.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';

export interface StatsBreakdownParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  filters?: string | undefined;
  dimension: (typeof STATS_DIMENSIONS)[number];
  limit: number;
}

/** Events and visitors per value of a dimension, largest first, the values past `limit` summed into `other`. */
export async function statsBreakdown(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: StatsBreakdownParams,
): Promise<StatsBreakdownResponse> {
  const names = EventNamesFilter.parse(params.events);
  const stats = await storeFor(deps, partner, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const { rows, other } = await stats.topValues(principalOf(partner), {
    merchantId: params.merchantId,
    start: range.start,
    end: range.end,
    names,
    filters: filtersOf(params.filters),
    dimension: params.dimension,
    limit: params.limit,
  });
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    dimension: params.dimension,
    rows,
    other,
  };
}
