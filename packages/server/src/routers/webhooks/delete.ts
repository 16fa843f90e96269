import { deleteWebhook } from '../../services/webhooks/endpoints.js';
import { partnerProcedure } from '../../trpc.js';
import { deleteWebhookMeta, ZDeleteWebhookRequest, ZDeleteWebhookResponse } from './delete.types.js';

export const deleteWebhookRoute = partnerProcedure
  .meta(deleteWebhookMeta)
  .input(ZDeleteWebhookRequest)
  .output(ZDeleteWebhookResponse)
  .mutation(({ ctx, input }) => deleteWebhook(ctx.db, ctx.partner, input.webhookId));
