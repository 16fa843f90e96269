import { ListMerchantsQuery, ListMerchantsResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const listMerchantsMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/merchant',
    tags: ['Merchants'],
    summary: 'List merchants',
    description: "One page of the partner's merchants, oldest first, each with its tags.",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'DATABASE_ERROR'],
};

export const ZListMerchantsRequest = ListMerchantsQuery;
export const ZListMerchantsResponse = ListMerchantsResponse;
