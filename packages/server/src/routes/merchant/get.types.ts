import { GetMerchantInput, Merchant } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const getMerchantMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/merchant/{merchantId}',
    tags: ['Merchants'],
    summary: 'Get a merchant',
    description:
      'One merchant with its tags, as the list shows it. A missing merchant, a deleted one and another ' +
      "partner's merchant all answer 404 MERCHANT_NOT_FOUND.",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZGetMerchantRequest = GetMerchantInput;
export const ZGetMerchantResponse = Merchant;
