import type { StatsRealtimeResponse } from '@partner/shared-schemas';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { filtersOf, principalOf, type StatsDeps, storeFor } from './reader.js';

/** Visitors on a merchant's site in the last 5 minutes, and the pages they are on. */
export async function statsRealtime(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: { merchantId: string; filters?: string | undefined },
): Promise<StatsRealtimeResponse> {
  const stats = await storeFor(deps, partner, params.merchantId);
  return stats.visitorsNow(principalOf(partner), params.merchantId, Date.now(), filtersOf(params.filters));
}
