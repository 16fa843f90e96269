import { deleteMerchant } from '../../features/merchants/delete-merchant.js';
import { partnerProcedure } from '../procedures.js';
import { deleteMerchantMeta, ZDeleteMerchantRequest, ZDeleteMerchantResponse } from './delete.types.js';

export const deleteMerchantRoute = partnerProcedure
  .meta(deleteMerchantMeta)
  .input(ZDeleteMerchantRequest)
  .output(ZDeleteMerchantResponse)
  .mutation(({ ctx, input }) => deleteMerchant(ctx.db, ctx.partner, ctx.deletedTags, input.merchantId));
