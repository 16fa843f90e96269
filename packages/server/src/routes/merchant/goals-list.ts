import { listGoals } from '../../features/goals/list-goals.js';
import { assertSessionMerchant } from '../../features/partners/session-scope.js';
import { partnerProcedure } from '../procedures.js';
import { listGoalsMeta, ZListGoalsRequest, ZListGoalsResponse } from './goals-list.types.js';

export const listGoalsRoute = partnerProcedure
  .meta(listGoalsMeta)
  .input(ZListGoalsRequest)
  .output(ZListGoalsResponse)
  .query(({ ctx, input }) => {
    assertSessionMerchant(ctx.partner, input.merchantId);
    return listGoals(ctx.db, ctx.partner, input.merchantId);
  });
