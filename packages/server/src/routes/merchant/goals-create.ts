import { createGoal } from '../../features/goals/create-goal.js';
import { partnerProcedure } from '../procedures.js';
import { createGoalMeta, ZCreateGoalRequest, ZCreateGoalResponse } from './goals-create.types.js';

export const createGoalRoute = partnerProcedure
  .meta(createGoalMeta)
  .input(ZCreateGoalRequest)
  .output(ZCreateGoalResponse)
  .mutation(({ ctx, input }) => createGoal(ctx.db, ctx.partner, input));
