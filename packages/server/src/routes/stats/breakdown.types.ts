import { StatsBreakdownQuery, StatsBreakdownResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const statsBreakdownMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/stats/breakdown',
    tags: ['Stats'],
    summary: 'Stats breakdown',
    description:
      "Events, visitors and visits per value of a dimension (event name, page, entry or exit page, the visit's referrer, utm_* or channel, the client's country, device, browser or system), largest first, the rest summed in one other row.",
    protect: true,
  },
  sessionAccess: 'merchant',
  csv: true,
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'MERCHANT_NOT_FOUND',
    'GOAL_NOT_FOUND',
    'DATABASE_ERROR',
    'STATS_UNAVAILABLE',
    'STATS_NOT_CONFIGURED',
  ],
};

export const ZStatsBreakdownRequest = StatsBreakdownQuery;
export const ZStatsBreakdownResponse = StatsBreakdownResponse;
