import { EventNamesFilter, type StatsAttributionResponse } from '@partner/shared-schemas';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { statsRange } from './range.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';
import type { TouchesQuery } from './touches.js';

export interface StatsAttributionParams {
  merchantId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  events?: string | undefined;
  filters?: string | undefined;
  model: TouchesQuery['model'];
  dimension: TouchesQuery['dimension'];
  limit: number;
}

/** Purchases and revenue credited to each visitor's first or last visit's value in the range. */
export async function statsAttribution(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: StatsAttributionParams,
): Promise<StatsAttributionResponse> {
  const stats = await storeFor(deps, partner, params.merchantId);
  const range = statsRange(params.startDate, params.endDate, params.timezone);
  const rows = await stats.touches(principalOf(partner), {
    merchantId: params.merchantId,
    start: range.start,
    end: range.end,
    names: EventNamesFilter.parse(params.events),
    filters: filtersOf(params.filters),
    model: params.model,
    dimension: params.dimension,
    limit: params.limit,
  });
  return {
    range: { startDate: range.startDate, endDate: range.endDate, timezone: range.timezone },
    model: params.model,
    dimension: params.dimension,
    rows,
  };
}
