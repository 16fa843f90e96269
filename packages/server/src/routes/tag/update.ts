import { updateTag } from '../../features/tags/update-tag.js';
import { partnerProcedure } from '../procedures.js';
import { updateTagMeta, ZUpdateTagRequest, ZUpdateTagResponse } from './update.types.js';

export const updateTagRoute = partnerProcedure
  .meta(updateTagMeta)
  .input(ZUpdateTagRequest)
  .output(ZUpdateTagResponse)
  .mutation(({ ctx, input }) => updateTag(ctx.db, ctx.partner, ctx.tagState, ctx.deletedTags, input));
