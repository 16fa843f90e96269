import { partnerCapsOf } from '../../services/partner/caps.js';
import { createWebhook } from '../../services/webhooks/endpoints.js';
import { partnerProcedure } from '../../trpc.js';
import { createWebhookMeta, ZCreateWebhookRequest, ZCreateWebhookResponse } from './create.types.js';

export const createWebhookRoute = partnerProcedure
  .meta(createWebhookMeta)
  .input(ZCreateWebhookRequest)
  .output(ZCreateWebhookResponse)
  .mutation(({ ctx, input }) =>
    createWebhook(
      ctx.db,
      ctx.partner,
      { allowPrivate: ctx.env.WEBHOOK_ALLOW_PRIVATE_URLS, resolver: ctx.webhookResolver },
      partnerCapsOf(ctx.env),
      input,
    ),
  );
