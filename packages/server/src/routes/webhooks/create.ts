import { partnerCapsOf } from '../../features/partners/caps.js';
import { createWebhook } from '../../features/webhooks/endpoints.js';
import { partnerProcedure } from '../procedures.js';
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
