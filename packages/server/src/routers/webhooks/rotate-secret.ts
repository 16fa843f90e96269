import { rotateWebhookSecret } from '../../services/webhooks/endpoints.js';
import { partnerProcedure } from '../../trpc.js';
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
