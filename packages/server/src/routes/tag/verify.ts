import { verifyTag } from '../../features/tags/verify-tag.js';
import { partnerProcedure } from '../procedures.js';
import { verifyTagMeta, ZVerifyTagRequest, ZVerifyTagResponse } from './verify.types.js';

export const verifyTagRoute = partnerProcedure
  .meta(verifyTagMeta)
  .input(ZVerifyTagRequest)
  .output(ZVerifyTagResponse)
  .mutation(({ ctx, input }) => verifyTag(ctx.db, ctx.partner, ctx.dns, ctx.tagState, input));
