import { GenerateTagInput, GenerateTagResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const generateTagMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/tag/generate',
    tags: ['Tags'],
    summary: 'Generate a tag',
    description:
      "Creates the merchant's tag for a domain, or returns the existing one for that domain type. " +
      "A domain equal to or under the partner's domain is preverified (`active` at once); any other " +
      'must be a registrable root domain and needs its CNAME published and verified.',
    protect: true,
  },
  // Spec 4.3 also lists 500 SERVICE_UNAVAILABLE (request could not be processed) and 503
  // SERVICE_UNAVAILABLE (external tag service unavailable); clients must be told to expect them.
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'MERCHANT_NOT_FOUND',
    'LIMIT_EXCEEDED',
    'DATABASE_ERROR',
    'TAG_CONFIGURATION_INCOMPLETE',
    'INTERNAL',
    'SERVICE_UNAVAILABLE',
  ],
};

export const ZGenerateTagRequest = GenerateTagInput;
export const ZGenerateTagResponse = GenerateTagResponse;
