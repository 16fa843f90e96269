import { CreateWebhookInput, CreateWebhookResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const createWebhookMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/webhooks',
    tags: ['Webhooks'],
    summary: 'Register a webhook endpoint',
    description:
      'Registers an `https` URL that receives signed events (Standard Webhooks: `webhook-id`, `webhook-timestamp`, ' +
      '`webhook-signature` headers; body `{ type, timestamp, livemode, data }`). The answer holds the signing secret, shown only ' +
      'here. URLs on loopback, private, link-local or metadata addresses are refused with 400 VALIDATION_ERROR naming the rule.',
    protect: true,
  },
  successStatus: 201,
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'LIMIT_EXCEEDED', 'DATABASE_ERROR'],
};

export const ZCreateWebhookRequest = CreateWebhookInput;
export const ZCreateWebhookResponse = CreateWebhookResponse;
