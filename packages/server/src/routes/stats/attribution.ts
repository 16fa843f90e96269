import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { statsAttribution } from '../../features/stats/attribution.js';
import { partnerProcedure } from '../procedures.js';
import { statsAttributionMeta, ZStatsAttributionRequest, ZStatsAttributionResponse } from './attribution.types.js';

export const statsAttributionRoute = partnerProcedure
  .meta(statsAttributionMeta)
  .input(ZStatsAttributionRequest)
  .output(ZStatsAttributionResponse)
  .query(({ ctx, input }) => {
    assertSessionMerchant(ctx.partner, input.merchantId);
    return statsAttribution(ctx, ctx.partner, input);
  });
