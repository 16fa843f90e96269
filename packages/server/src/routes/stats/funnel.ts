import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { statsFunnel } from '../../features/stats/funnel.js';
import { partnerProcedure } from '../procedures.js';
import { statsFunnelMeta, ZStatsFunnelRequest, ZStatsFunnelResponse } from './funnel.types.js';

export const statsFunnelRoute = partnerProcedure
  .meta(statsFunnelMeta)
  .input(ZStatsFunnelRequest)
  .output(ZStatsFunnelResponse)
  .query(({ ctx, input }) => {
    assertSessionMerchant(ctx.partner, input.merchantId);
    return statsFunnel(ctx, ctx.partner, input);
  });
