import { ListWebhookDeliveriesQuery, ListWebhookDeliveriesResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const listWebhookDeliveriesMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/webhooks/{webhookId}/deliveries',
    tags: ['Webhooks'],
    summary: 'List deliveries of a webhook endpoint',
    description:
      "One page of the endpoint's deliveries, newest first: each message's state (`pending`, `succeeded`, `failed`), " +
      'attempts so far, the last status code or error and the next attempt.',
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'WEBHOOK_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZListWebhookDeliveriesRequest = ListWebhookDeliveriesQuery;
export const ZListWebhookDeliveriesResponse = ListWebhookDeliveriesResponse;
