import { VerifyTagInput, VerifyTagResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const verifyTagMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/tag/verify',
    tags: ['Tags'],
    summary: 'Verify a custom domain',
    description:
      "Checks in DNS that the tag's CNAME record points at the tag target host. On success the tag " +
      'becomes `waiting_for_events`. DNS changes take 5 to 30 minutes to propagate, up to 48 hours.',
    protect: true,
  },
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'ACCESS_DENIED',
    'TAG_NOT_FOUND',
    'DNS_VERIFICATION_FAILED',
    'DATABASE_ERROR',
    'EXTERNAL_SERVICE_ERROR',
  ],
};

export const ZVerifyTagRequest = VerifyTagInput;
export const ZVerifyTagResponse = VerifyTagResponse;
