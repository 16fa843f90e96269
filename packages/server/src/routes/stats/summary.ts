import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { statsSummary } from '../../features/stats/summary.js';
import { partnerProcedure } from '../procedures.js';
import { statsSummaryMeta, ZStatsSummaryRequest, ZStatsSummaryResponse } from './summary.types.js';

export const statsSummaryRoute = partnerProcedure
  .meta(statsSummaryMeta)
  .input(ZStatsSummaryRequest)
  .output(ZStatsSummaryResponse)
  .query(({ ctx, input }) => {
    assertSessionMerchant(ctx.partner, input.merchantId);
    return statsSummary(ctx, ctx.partner, input);
  });
