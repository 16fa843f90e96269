import { TagSnippetInput, TagSnippetResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const tagSnippetMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/tag/{tagId}/snippet',
    tags: ['Tags'],
    summary: 'Get the install snippet of a tag',
    description:
      "The HTML a merchant pastes into every page, the tag's collector host (its CNAME) and script URL. " +
      "The script records a PageView on load and `ptag('track', name, data)` calls, sent first-party to " +
      'the collector host. Events flow once the tag is live (preverified, or custom after verification).',
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'ACCESS_DENIED', 'TAG_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZTagSnippetRequest = TagSnippetInput;
export const ZTagSnippetResponse = TagSnippetResponse;
