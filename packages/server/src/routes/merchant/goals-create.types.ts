import { CreateGoalInput, Goal } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const createGoalMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/merchant/{merchantId}/goals',
    tags: ['Goals'],
    summary: 'Create a goal',
    description:
      'A conversion the statistics count: events of one name (`eventName`) or page views of matching paths ' +
      '(`pathPattern`, `*` within a segment, `**` across). It applies to the events already stored too. ' +
      'At most 100 per merchant (409 LIMIT_EXCEEDED).',
    protect: true,
  },
  successStatus: 201,
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'LIMIT_EXCEEDED', 'DATABASE_ERROR'],
};

export const ZCreateGoalRequest = CreateGoalInput;
export const ZCreateGoalResponse = Goal;
