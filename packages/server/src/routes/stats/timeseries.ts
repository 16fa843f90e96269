import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { statsTimeseries } from '../../features/stats/timeseries.js';
import { partnerProcedure } from '../procedures.js';
import { statsTimeseriesMeta, ZStatsTimeseriesRequest, ZStatsTimeseriesResponse } from './timeseries.types.js';

export const statsTimeseriesRoute = partnerProcedure
  .meta(statsTimeseriesMeta)
  .input(ZStatsTimeseriesRequest)
  .output(ZStatsTimeseriesResponse)
  .query(({ ctx, input }) => {
    assertSessionMerchant(ctx.partner, input.merchantId);
    return statsTimeseries(ctx, ctx.partner, input);
  });
