import { rotateWebhookSecret } from '../../features/webhooks/endpoints.js';
import { partnerProcedure } from '../procedures.js';
import {
  rotateWebhookSecretMeta,
  ZRotateWebhookSecretRequest,
  ZRotateWebhookSecretResponse,
} from './rotate-secret.types.js';

export const rotateWebhookSecretRoute = partnerProcedure
  .meta(rotateWebhookSecretMeta)
  .input(ZRotateWebhookSecretRequest)
  .output(ZRotateWebhookSecretResponse)
  .mutation(({ ctx, input }) => rotateWebhookSecret(ctx.db, ctx.partner, input.webhookId));
