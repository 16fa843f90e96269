import { StatsRealtimeQuery, StatsRealtimeResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const statsRealtimeMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/stats/realtime',
    tags: ['Stats'],
    summary: 'Visitors now',
    description:
      "Distinct visitors and page views of a merchant's site in the last 5 minutes, and the pages those visitors are on (each on their latest).",
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

export const ZStatsRealtimeRequest = StatsRealtimeQuery;
export const ZStatsRealtimeResponse = StatsRealtimeResponse;
