import { createMerchant } from '../../features/merchants/create-merchant.js';
import { partnerCapsOf } from '../../features/partners/caps.js';
import { partnerProcedure } from '../procedures.js';
import { createMerchantMeta, ZCreateMerchantRequest, ZCreateMerchantResponse } from './create.types.js';

export const createMerchantRoute = partnerProcedure
  .meta(createMerchantMeta)
  .input(ZCreateMerchantRequest)
  .output(ZCreateMerchantResponse)
  .mutation(({ ctx, input }) => createMerchant(ctx.db, ctx.partner, partnerCapsOf(ctx.env), input));
