import { ListEventsQuery, ListEventsResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const listEventsMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/events',
    tags: ['Events'],
    summary: 'List events',
    description:
      "One page of a merchant's tracking events, filtered by names and an inclusive UTC date range, " +
      'sorted by time or name with the event id as tie-breaker.',
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR'],
  nextLink: true,
};

export const ZListEventsRequest = ListEventsQuery;
export const ZListEventsResponse = ListEventsResponse;
