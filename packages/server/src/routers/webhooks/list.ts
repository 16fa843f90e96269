import { listWebhooks } from '../../services/webhooks/endpoints.js';
import { partnerProcedure } from '../../trpc.js';
import { listWebhooksMeta, ZListWebhooksRequest, ZListWebhooksResponse } from './list.types.js';

export const listWebhooksRoute = partnerProcedure
  .meta(listWebhooksMeta)
  .input(ZListWebhooksRequest)
  .output(ZListWebhooksResponse)
  .query(({ ctx, input }) => listWebhooks(ctx.db, ctx.partner, input));
