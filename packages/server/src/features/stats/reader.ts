import { parseStatsFilters, type StatsFilter } from '@partner/shared-schemas';
import type { Database } from '../../db/client.js';
import type { Env } from '../../kernel/env.js';
import { AppError } from '../../kernel/errors.js';
import { findOwnMerchant } from '../merchants/find-merchant.js';
import type { AuthenticatedPartner } from '../partners/authenticate.js';
import type { StatsStore } from './store.js';

/** What a statistics read needs: the primary (whose merchant it is) and the store (undefined: not here). */
export interface StatsDeps {
  db: Database;
  stats?: StatsStore | undefined;
  env: Pick<Env, 'STATS'>;
}

/** Who a read is counted against in the store's gate: the session, else the key, else the partner. */
export function principalOf(partner: AuthenticatedPartner): string {
  if (partner.session) return `session:${partner.session.id}`;
  return partner.key ? `key:${partner.key.id}` : `partner:${partner.id}`;
}

/**
 * The store after checking the merchant is the partner's. A process without one (ROLE api or
 * writer with no CLICKHOUSE_URL) answers 503 naming the setting.
 */
export async function storeFor(
  deps: StatsDeps,
  partner: AuthenticatedPartner,
  merchantId: string,
): Promise<StatsStore> {
  await findOwnMerchant(deps.db, partner, merchantId);
  if (!deps.stats) {
    if (deps.env.STATS === 'off') throw new AppError('STATS_OFF', 'Statistics are off on this server (STATS=off).');
    throw new AppError(
      'STATS_NOT_CONFIGURED',
      'Statistics need CLICKHOUSE_URL on servers that run as several processes (ROLE api or writer).',
    );
  }
  return deps.stats;
}

/** The `filters` parameter as clauses (the schema has already refused a bad one with a 400). */
export function filtersOf(text: string | undefined): StatsFilter[] {
  if (!text) return [];
  const parsed = parseStatsFilters(text);
  if ('error' in parsed) throw new AppError('VALIDATION_ERROR', `Invalid request: filters: ${parsed.error}`);
  return parsed.filters;
}
