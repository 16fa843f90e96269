import { createMerchantSession } from '../../features/merchants/create-session.js';
import { partnerProcedure } from '../procedures.js';
import {
  createMerchantSessionMeta,
  ZCreateMerchantSessionRequest,
  ZCreateMerchantSessionResponse,
} from './sessions.types.js';

export const createMerchantSessionRoute = partnerProcedure
  .meta(createMerchantSessionMeta)
  .input(ZCreateMerchantSessionRequest)
  .output(ZCreateMerchantSessionResponse)
  .mutation(({ ctx, input }) => createMerchantSession(ctx.db, ctx.partner, input));
