import { listMerchants } from '../../services/merchant/list-merchants.js';
import { partnerProcedure } from '../../trpc.js';
import { listMerchantsMeta, ZListMerchantsRequest, ZListMerchantsResponse } from './list.types.js';

export const listMerchantsRoute = partnerProcedure
  .meta(listMerchantsMeta)
  .input(ZListMerchantsRequest)
  .output(ZListMerchantsResponse)
  .query(({ ctx, input }) => listMerchants(ctx.db, ctx.partner, input));
