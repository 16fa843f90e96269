import { DeleteMerchantResponse, GetMerchantInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const deleteMerchantMeta: Meta = {
  openapi: {
    method: 'DELETE',
    path: '/v1/partners/merchant/{merchantId}',
    tags: ['Merchants'],
    summary: 'Delete a merchant',
    description:
      'Answers 202 `{ merchantId, deleted: true, purge: "pending" }`. From then on the merchant is 404 on every ' +
      'read (itself, the list, its events, export, stream, statistics and tags), its tags are deleted and their ' +
      'collector refuses at once on every process, and its count no longer counts toward ' +
      'MAX_MERCHANTS_PER_PARTNER. Its events, aggregates, stored idempotent responses and webhook messages are ' +
      'purged in the background, then a `merchant.deleted` webhook is sent. Deleting it again: 404.',
    protect: true,
  },
  successStatus: 202,
  successDescription: 'Deleted; the purge of its data is under way',
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZDeleteMerchantRequest = GetMerchantInput;
export const ZDeleteMerchantResponse = DeleteMerchantResponse;
