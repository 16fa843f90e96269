import { ListGoalsResponse, MerchantGoalsInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const listGoalsMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/merchant/{merchantId}/goals',
    tags: ['Goals'],
    summary: 'List goals',
    description: "The merchant's goals, oldest first (at most 100). A merchant session may read them.",
    protect: true,
  },
  sessionAccess: 'merchant',
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZListGoalsRequest = MerchantGoalsInput;
export const ZListGoalsResponse = ListGoalsResponse;
