import { statsBreakdown } from '../../features/stats/breakdown.js';
import { partnerProcedure } from '../procedures.js';
import { statsBreakdownMeta, ZStatsBreakdownRequest, ZStatsBreakdownResponse } from './breakdown.types.js';

export const statsBreakdownRoute = partnerProcedure
  .meta(statsBreakdownMeta)
  .input(ZStatsBreakdownRequest)
  .output(ZStatsBreakdownResponse)
  .query(({ ctx, input }) => statsBreakdown(ctx.db, ctx.partner, input));
