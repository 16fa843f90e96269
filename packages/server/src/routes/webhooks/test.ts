import { partnerCapsOf } from '../../features/partners/caps.js';
import { testWebhook } from '../../features/webhooks/endpoints.js';
import { partnerProcedure } from '../procedures.js';
import { testWebhookMeta, ZTestWebhookRequest, ZTestWebhookResponse } from './test.types.js';

export const testWebhookRoute = partnerProcedure
  .meta(testWebhookMeta)
  .input(ZTestWebhookRequest)
  .output(ZTestWebhookResponse)
  .mutation(({ ctx, input }) => testWebhook(ctx.db, ctx.partner, partnerCapsOf(ctx.env), input.webhookId));
