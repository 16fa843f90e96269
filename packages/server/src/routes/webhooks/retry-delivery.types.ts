import { RetryWebhookDeliveryInput, WebhookDelivery } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const retryWebhookDeliveryMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/webhooks/{webhookId}/deliveries/{deliveryId}/retry',
    tags: ['Webhooks'],
    summary: 'Retry a delivery',
    description:
      'Sends the message again as soon as possible (same `webhook-id`), whatever its state: a `failed` delivery ' +
      'gets one more attempt. Answers the delivery, now `pending` (202: sent in the background).',
    protect: true,
  },
  successStatus: 202,
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'WEBHOOK_NOT_FOUND', 'WEBHOOK_DELIVERY_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZRetryWebhookDeliveryRequest = RetryWebhookDeliveryInput;
export const ZRetryWebhookDeliveryResponse = WebhookDelivery;
