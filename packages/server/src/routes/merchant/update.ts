import { updateMerchant } from '../../features/merchants/update-merchant.js';
import { partnerProcedure } from '../procedures.js';
import { updateMerchantMeta, ZUpdateMerchantRequest, ZUpdateMerchantResponse } from './update.types.js';

export const updateMerchantRoute = partnerProcedure
  .meta(updateMerchantMeta)
  .input(ZUpdateMerchantRequest)
  .output(ZUpdateMerchantResponse)
  .mutation(({ ctx, input }) => updateMerchant(ctx.db, ctx.partner, input));
