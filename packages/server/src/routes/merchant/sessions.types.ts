import { CreateMerchantSessionInput, MerchantSession } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const createMerchantSessionMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/merchant/{merchantId}/sessions',
    tags: ['Merchants'],
    summary: 'Create a merchant session',
    description:
      'A short-lived token a browser may hold (`ms_...`, shown once): it reads this merchant’s statistics ' +
      '(`/v1/partners/stats/*`) and its tags’ status (`GET /v1/partners/tag/{tagId}`) and nothing else, ' +
      'from the listed origins only (they alone get CORS headers). It ends at `expiresAt` (default 15 min, ' +
      'at most 1 h) or when the API key that created it is revoked or expires, whichever comes first. Create ' +
      'it on your server with your API key; hand the token to your page.',
    protect: true,
  },
  successStatus: 201,
  successDescription: 'The session; its token is shown only here.',
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZCreateMerchantSessionRequest = CreateMerchantSessionInput;
export const ZCreateMerchantSessionResponse = MerchantSession;
