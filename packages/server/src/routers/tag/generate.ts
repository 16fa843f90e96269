import { partnerCapsOf } from '../../services/partner/caps.js';
import { generateTag } from '../../services/tag/generate-tag.js';
import { partnerProcedure } from '../../trpc.js';
import { generateTagMeta, ZGenerateTagRequest, ZGenerateTagResponse } from './generate.types.js';

export const generateTagRoute = partnerProcedure
  .meta(generateTagMeta)
  .input(ZGenerateTagRequest)
  .output(ZGenerateTagResponse)
  .mutation(({ ctx, input }) => generateTag(ctx.db, ctx.partner, ctx.tagState, partnerCapsOf(ctx.env), input));
