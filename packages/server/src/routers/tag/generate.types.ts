import { GenerateTagInput, GenerateTagResponse } from '@partner/shared-schemas';
import type { Meta } from '../../trpc.js';

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
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR', 'TAG_CONFIGURATION_INCOMPLETE'],
};

export const ZGenerateTagRequest = GenerateTagInput;
export const ZGenerateTagResponse = GenerateTagResponse;
