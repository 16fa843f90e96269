import { partnerCapsOf } from '../../features/partners/caps.js';
import { generateTag } from '../../features/tags/generate-tag.js';
import { partnerProcedure } from '../procedures.js';
import { generateTagMeta, ZGenerateTagRequest, ZGenerateTagResponse } from './generate.types.js';

export const generateTagRoute = partnerProcedure
  .meta(generateTagMeta)
  .input(ZGenerateTagRequest)
  .output(ZGenerateTagResponse)
  .mutation(({ ctx, input }) => generateTag(ctx.db, ctx.partner, ctx.tagState, partnerCapsOf(ctx.env), input));
