import { listWebhookDeliveries } from '../../features/webhooks/deliveries.js';
import { partnerProcedure } from '../procedures.js';
import {
  listWebhookDeliveriesMeta,
  ZListWebhookDeliveriesRequest,
  ZListWebhookDeliveriesResponse,
} from './list-deliveries.types.js';

export const listWebhookDeliveriesRoute = partnerProcedure
  .meta(listWebhookDeliveriesMeta)
  .input(ZListWebhookDeliveriesRequest)
  .output(ZListWebhookDeliveriesResponse)
  .query(({ ctx, input }) => listWebhookDeliveries(ctx.db, ctx.partner, input));
