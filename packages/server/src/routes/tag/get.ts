import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { getTag } from '../../features/tags/tag-view.js';
import { partnerProcedure } from '../procedures.js';
import { getTagMeta, ZGetTagRequest, ZGetTagResponse } from './get.types.js';

export const getTagRoute = partnerProcedure
  .meta(getTagMeta)
  .input(ZGetTagRequest)
  .output(ZGetTagResponse)
  .query(async ({ ctx, input }) => {
    const tag = await getTag(ctx.db, ctx.partner, ctx.tagState, input);
    assertSessionMerchant(ctx.partner, tag.merchantId);
    return tag;
  });
