import { listMerchants } from '../../features/merchants/list-merchants.js';
import { hotListOutput } from '../hot-list-output.js';
import { partnerProcedure } from '../procedures.js';
import { listMerchantsMeta, ZListMerchantsRequest, ZListMerchantsResponse } from './list.types.js';

export const listMerchantsRoute = partnerProcedure
  .meta(listMerchantsMeta)
  .input(ZListMerchantsRequest)
  .output(hotListOutput(ZListMerchantsResponse))
  .query(({ ctx, input }) => listMerchants(ctx.db, ctx.partner, input));
