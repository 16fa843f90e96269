import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { statsRealtime } from '../../features/stats/realtime.js';
import { partnerProcedure } from '../procedures.js';
import { statsRealtimeMeta, ZStatsRealtimeRequest, ZStatsRealtimeResponse } from './realtime.types.js';

export const statsRealtimeRoute = partnerProcedure
  .meta(statsRealtimeMeta)
  .input(ZStatsRealtimeRequest)
  .output(ZStatsRealtimeResponse)
  .query(({ ctx, input }) => {
    assertSessionMerchant(ctx.partner, input.merchantId);
    return statsRealtime(ctx, ctx.partner, input);
  });
