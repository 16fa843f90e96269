import { listWebhooks } from '../../features/webhooks/endpoints.js';
import { partnerProcedure } from '../procedures.js';
import { listWebhooksMeta, ZListWebhooksRequest, ZListWebhooksResponse } from './list.types.js';

export const listWebhooksRoute = partnerProcedure
  .meta(listWebhooksMeta)
  .input(ZListWebhooksRequest)
  .output(ZListWebhooksResponse)
  .query(({ ctx, input }) => listWebhooks(ctx.db, ctx.partner, input));
