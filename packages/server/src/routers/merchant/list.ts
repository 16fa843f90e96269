import { listMerchants } from '../../services/merchant/list-merchants.js';
import { partnerProcedure } from '../../trpc.js';
import { hotListOutput } from '../hot-list-output.js';
import { listMerchantsMeta, ZListMerchantsRequest, ZListMerchantsResponse } from './list.types.js';

export const listMerchantsRoute = partnerProcedure
  .meta(listMerchantsMeta)
  .input(ZListMerchantsRequest)
  .output(hotListOutput(ZListMerchantsResponse))
  .query(({ ctx, input }) => listMerchants(ctx.db, ctx.partner, input));
