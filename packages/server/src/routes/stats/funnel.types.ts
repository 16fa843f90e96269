import { StatsFunnelQuery, StatsFunnelResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const statsFunnelMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/stats/funnel',
    tags: ['Stats'],
    summary: 'Funnel',
    description:
      'Visitors through 2 to 8 goals in order: a visitor counts for a step when they reached it and every step before it, ' +
      'in that order, within `window` of their first step (other events between are allowed), over the range.',
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

export const ZStatsFunnelRequest = StatsFunnelQuery;
export const ZStatsFunnelResponse = StatsFunnelResponse;
