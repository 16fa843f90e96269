import { DeleteWebhookResponse, WebhookIdInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const deleteWebhookMeta: Meta = {
  openapi: {
    method: 'DELETE',
    path: '/v1/partners/webhooks/{webhookId}',
    tags: ['Webhooks'],
    summary: 'Delete a webhook endpoint',
    description:
      'Stops all deliveries to the endpoint: nothing more is sent and its pending deliveries become `failed`. ' +
      'Answers 204 with no body.',
    protect: true,
  },
  successStatus: 204,
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'WEBHOOK_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZDeleteWebhookRequest = WebhookIdInput;
export const ZDeleteWebhookResponse = DeleteWebhookResponse;
