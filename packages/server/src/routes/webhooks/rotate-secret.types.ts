import { RotateWebhookSecretResponse, WebhookIdInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const rotateWebhookSecretMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/webhooks/{webhookId}/rotate-secret',
    operationId: 'webhooks-rotate-secret',
    tags: ['Webhooks'],
    summary: 'Rotate the signing secret',
    description:
      'Issues a new signing secret. For 24 hours every message carries two signatures in `webhook-signature`, ' +
      'one with the new secret and one with the old, so receivers can switch over without losing a message.',
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'WEBHOOK_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZRotateWebhookSecretRequest = WebhookIdInput;
export const ZRotateWebhookSecretResponse = RotateWebhookSecretResponse;
