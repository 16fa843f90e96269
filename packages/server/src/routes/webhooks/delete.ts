import { deleteWebhook } from '../../features/webhooks/endpoints.js';
import { partnerProcedure } from '../procedures.js';
import { deleteWebhookMeta, ZDeleteWebhookRequest, ZDeleteWebhookResponse } from './delete.types.js';

export const deleteWebhookRoute = partnerProcedure
  .meta(deleteWebhookMeta)
  .input(ZDeleteWebhookRequest)
  .output(ZDeleteWebhookResponse)
  .mutation(({ ctx, input }) => deleteWebhook(ctx.db, ctx.partner, input.webhookId));
