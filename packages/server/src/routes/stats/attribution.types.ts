import { StatsAttributionQuery, StatsAttributionResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const statsAttributionMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/stats/attribution',
    tags: ['Stats'],
    summary: 'Revenue by first or last touch',
    description:
      "Each visitor's purchases in the range credited to the channel, referrer or utm value of their first (`first_touch`) " +
      'or last (`last_touch`) visit in the range: per value the visitors, purchases and exact revenue per currency.',
    protect: true,
  },
  sessionAccess: 'merchant',
  csv: true,
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'MERCHANT_NOT_FOUND',
    'DATABASE_ERROR',
    'STATS_UNAVAILABLE',
    'STATS_NOT_CONFIGURED',
  ],
};

export const ZStatsAttributionRequest = StatsAttributionQuery;
export const ZStatsAttributionResponse = StatsAttributionResponse;
