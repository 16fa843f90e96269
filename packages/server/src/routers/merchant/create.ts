import { createMerchant } from '../../services/merchant/create-merchant.js';
import { partnerCapsOf } from '../../services/partner/caps.js';
import { partnerProcedure } from '../../trpc.js';
import { createMerchantMeta, ZCreateMerchantRequest, ZCreateMerchantResponse } from './create.types.js';

export const createMerchantRoute = partnerProcedure
  .meta(createMerchantMeta)
  .input(ZCreateMerchantRequest)
  .output(ZCreateMerchantResponse)
  .mutation(({ ctx, input }) => createMerchant(ctx.db, ctx.partner, partnerCapsOf(ctx.env), input));
