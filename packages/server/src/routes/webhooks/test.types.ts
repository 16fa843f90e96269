import { TestWebhookResponse, WebhookIdInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const testWebhookMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/webhooks/{webhookId}/test',
    tags: ['Webhooks'],
    summary: 'Send a test event',
    description:
      'Queues a `webhook.test` event to this endpoint only and answers its delivery (202: sent in the background; ' +
      'follow it in the delivery list).',
    protect: true,
  },
  successStatus: 202,
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'WEBHOOK_NOT_FOUND', 'RATE_LIMITED', 'DATABASE_ERROR'],
};

export const ZTestWebhookRequest = WebhookIdInput;
export const ZTestWebhookResponse = TestWebhookResponse;
