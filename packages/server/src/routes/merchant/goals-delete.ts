import { deleteGoal } from '../../features/goals/delete-goal.js';
import { partnerProcedure } from '../procedures.js';
import { deleteGoalMeta, ZDeleteGoalRequest, ZDeleteGoalResponse } from './goals-delete.types.js';

export const deleteGoalRoute = partnerProcedure
  .meta(deleteGoalMeta)
  .input(ZDeleteGoalRequest)
  .output(ZDeleteGoalResponse)
  .mutation(({ ctx, input }) => deleteGoal(ctx.db, ctx.partner, input));
