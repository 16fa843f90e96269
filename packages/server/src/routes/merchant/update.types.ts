import { Merchant, UpdateMerchantInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const updateMerchantMeta: Meta = {
  openapi: {
    method: 'PATCH',
    path: '/v1/partners/merchant/{merchantId}',
    tags: ['Merchants'],
    summary: 'Update a merchant',
    description:
      'Sets the fields given: `name` (trimmed, 1..255 characters) and `retentionDays` (1..3650 days its events ' +
      "are kept, or null to inherit the partner's default) and `timezone` (IANA; its weekly digest's week); at least one. Answers the merchant as GET does. " +
      "A missing, deleted or another partner's merchant: 404 MERCHANT_NOT_FOUND.",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZUpdateMerchantRequest = UpdateMerchantInput;
export const ZUpdateMerchantResponse = Merchant;
