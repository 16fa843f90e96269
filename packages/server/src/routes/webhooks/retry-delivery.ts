import { retryWebhookDelivery } from '../../features/webhooks/deliveries.js';
import { partnerProcedure } from '../procedures.js';
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
