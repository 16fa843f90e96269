import { partnerCapsOf } from '../../services/partner/caps.js';
import { testWebhook } from '../../services/webhooks/endpoints.js';
import { partnerProcedure } from '../../trpc.js';
import { testWebhookMeta, ZTestWebhookRequest, ZTestWebhookResponse } from './test.types.js';

export const testWebhookRoute = partnerProcedure
  .meta(testWebhookMeta)
  .input(ZTestWebhookRequest)
  .output(ZTestWebhookResponse)
  .mutation(({ ctx, input }) => testWebhook(ctx.db, ctx.partner, partnerCapsOf(ctx.env), input.webhookId));
