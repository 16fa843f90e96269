import { DeleteGoalResponse, GoalIdInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const deleteGoalMeta: Meta = {
  openapi: {
    method: 'DELETE',
    path: '/v1/partners/merchant/{merchantId}/goals/{goalId}',
    tags: ['Goals'],
    summary: 'Delete a goal',
    description: 'The statistics stop counting it at once. Answers 204 with no body.',
    protect: true,
  },
  successStatus: 204,
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'GOAL_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZDeleteGoalRequest = GoalIdInput;
export const ZDeleteGoalResponse = DeleteGoalResponse;
