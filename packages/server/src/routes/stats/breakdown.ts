import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { statsBreakdown } from '../../features/stats/breakdown.js';
import { partnerProcedure } from '../procedures.js';
import { statsBreakdownMeta, ZStatsBreakdownRequest, ZStatsBreakdownResponse } from './breakdown.types.js';

export const statsBreakdownRoute = partnerProcedure
  .meta(statsBreakdownMeta)
  .input(ZStatsBreakdownRequest)
  .output(ZStatsBreakdownResponse)
  .query(({ ctx, input }) => {
    assertSessionMerchant(ctx.partner, input.merchantId);
    return statsBreakdown(ctx, ctx.partner, input);
  });
