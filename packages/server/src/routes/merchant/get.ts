import { getMerchant } from '../../features/merchants/get-merchant.js';
import { partnerProcedure } from '../procedures.js';
import { getMerchantMeta, ZGetMerchantRequest, ZGetMerchantResponse } from './get.types.js';

export const getMerchantRoute = partnerProcedure
  .meta(getMerchantMeta)
  .input(ZGetMerchantRequest)
  .output(ZGetMerchantResponse)
  .query(({ ctx, input }) => getMerchant(ctx.db, ctx.partner, input.merchantId));
