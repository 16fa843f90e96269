import { triggerStatsNotice } from '../../features/stats-notices/trigger-stats.js';
import { partnerProcedure } from '../procedures.js';
import { triggerStatsMeta, ZTriggerStatsRequest, ZTriggerStatsResponse } from './trigger-stats.types.js';

export const triggerStatsRoute = partnerProcedure
  .meta(triggerStatsMeta)
  .input(ZTriggerStatsRequest)
  .output(ZTriggerStatsResponse)
  .mutation(({ ctx, input }) => triggerStatsNotice(ctx, ctx.partner, input));
