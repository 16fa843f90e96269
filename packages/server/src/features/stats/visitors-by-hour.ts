import type { AuthenticatedPartner } from '../partners/authenticate.js';
import { principalOf, type StatsDeps, storeFor } from './reader.js';

/** What a statistics use case needs (the primary, the store, the STATS setting). */
export type { StatsDeps };

/** Visitors of a merchant's whole UTC hours (their starts, ms), as the hourly timeseries counts them. */
export async function statsVisitorsByHour(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  params: { merchantId: string; hours: readonly number[] },
): Promise<Map<number, number>> {
  const stats = await storeFor(deps, partner, params.merchantId);
  return stats.hourVisitors(principalOf(partner), params.merchantId, params.hours);
}
