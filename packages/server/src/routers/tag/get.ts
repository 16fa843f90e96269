import { getTag } from '../../features/tags/tag-view.js';
import { partnerProcedure } from '../procedures.js';
import { getTagMeta, ZGetTagRequest, ZGetTagResponse } from './get.types.js';

export const getTagRoute = partnerProcedure
  .meta(getTagMeta)
  .input(ZGetTagRequest)
  .output(ZGetTagResponse)
  .query(({ ctx, input }) => getTag(ctx.db, ctx.partner, ctx.tagState, input));
