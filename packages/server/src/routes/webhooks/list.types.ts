import { ListWebhooksQuery, ListWebhooksResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const listWebhooksMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/webhooks',
    tags: ['Webhooks'],
    summary: 'List webhook endpoints',
    description: "One page of the partner's webhook endpoints, oldest first. Secrets are never listed.",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'DATABASE_ERROR'],
};

export const ZListWebhooksRequest = ListWebhooksQuery;
export const ZListWebhooksResponse = ListWebhooksResponse;
