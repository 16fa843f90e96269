import { retryWebhookDelivery } from '../../services/webhooks/deliveries.js';
import { partnerProcedure } from '../../trpc.js';
import {
  retryWebhookDeliveryMeta,
  ZRetryWebhookDeliveryRequest,
  ZRetryWebhookDeliveryResponse,
} from './retry-delivery.types.js';

export const retryWebhookDeliveryRoute = partnerProcedure
  .meta(retryWebhookDeliveryMeta)
  .input(ZRetryWebhookDeliveryRequest)
  .output(ZRetryWebhookDeliveryResponse)
  .mutation(({ ctx, input }) => retryWebhookDelivery(ctx.db, ctx.partner, input));
