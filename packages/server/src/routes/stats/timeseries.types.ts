import { StatsTimeseriesQuery, StatsTimeseriesResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const statsTimeseriesMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/stats/timeseries',
    tags: ['Stats'],
    summary: 'Stats timeseries',
    description:
      "A merchant's totals per local hour, day, week or month of the range, zero-filled; starts carry the zone's offset.",
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

export const ZStatsTimeseriesRequest = StatsTimeseriesQuery;
export const ZStatsTimeseriesResponse = StatsTimeseriesResponse;
