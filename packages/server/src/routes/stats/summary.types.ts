import { StatsSummaryQuery, StatsSummaryResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const statsSummaryMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/stats/summary',
    tags: ['Stats'],
    summary: 'Stats summary',
    description:
      "A merchant's totals over inclusive local dates: events, visitors, page views, purchases, revenue per currency, visits with their bounce rate, mean duration and page views, and the events refused as bots; with compare=previous, the period before too. Narrowed by `events` and `filters`.",
    protect: true,
  },
  sessionAccess: 'merchant',
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'MERCHANT_NOT_FOUND',
    'DATABASE_ERROR',
    'STATS_UNAVAILABLE',
    'STATS_NOT_CONFIGURED',
  ],
};

export const ZStatsSummaryRequest = StatsSummaryQuery;
export const ZStatsSummaryResponse = StatsSummaryResponse;
