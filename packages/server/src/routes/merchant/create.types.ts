import { CreateMerchantInput, CreateMerchantResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const createMerchantMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/merchant',
    tags: ['Merchants'],
    summary: 'Create a merchant',
    description:
      'Registers a merchant under the partner. The name is trimmed and must be 1..255 characters; `timezone` ' +
      '(IANA, default `UTC`) is where its weekly `stats.digest` week starts.',
    protect: true,
  },
  successStatus: 201,
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'LIMIT_EXCEEDED', 'DATABASE_ERROR'],
};

export const ZCreateMerchantRequest = CreateMerchantInput;
export const ZCreateMerchantResponse = CreateMerchantResponse;
