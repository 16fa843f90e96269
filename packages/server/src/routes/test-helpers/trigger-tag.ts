import { triggerTagEvent } from '../../features/tags/trigger-tag.js';
import { partnerProcedure } from '../procedures.js';
import { triggerTagMeta, ZTriggerTagRequest, ZTriggerTagResponse } from './trigger-tag.types.js';

export const triggerTagRoute = partnerProcedure
  .meta(triggerTagMeta)
  .input(ZTriggerTagRequest)
  .output(ZTriggerTagResponse)
  .mutation(({ ctx, input }) => triggerTagEvent(ctx.db, ctx.partner, ctx.tagState, input));
