import { deleteTag } from '../../features/tags/delete-tag.js';
import { partnerProcedure } from '../procedures.js';
import { deleteTagMeta, ZDeleteTagRequest, ZDeleteTagResponse } from './delete.types.js';

export const deleteTagRoute = partnerProcedure
  .meta(deleteTagMeta)
  .input(ZDeleteTagRequest)
  .output(ZDeleteTagResponse)
  .mutation(({ ctx, input }) => deleteTag(ctx.db, ctx.partner, ctx.tagState, ctx.deletedTags, input.tagId));
