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
      'becomes `waiting_for_events`. DNS changes take 5 to 30 minutes to propagate, up to 48 hours. In test mode ' +
      '(`mp_test_...` keys) no DNS is asked: the domain verifies unless its first label ends in a reason code in ' +
      'kebab case (`shop-record-not-found.com`, `-wrong-target`, `-not-a-cname`, `-wildcard-record`, ' +
      '`-cname-chain-too-long`, `-resolver-unavailable`), which is then the outcome, with the status and `details` a real zone gives.',
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
