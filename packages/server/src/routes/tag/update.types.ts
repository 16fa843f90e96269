import { Tag, UpdateTagInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const updateTagMeta: Meta = {
  openapi: {
    method: 'PATCH',
    path: '/v1/partners/tag/{tagId}',
    tags: ['Tags'],
    summary: 'Update a tag',
    description:
      'Sets the consent settings given (`consentMode`, `respectGpc`, `cookieless`; at least one, the others stay) ' +
      "and answers the tag as GET does. The collector applies them to the next batch; the tag script's config " +
      "changes with them (a browser may keep its cached copy for up to 5 minutes). A missing or another partner's " +
      'tag: 404 TAG_NOT_FOUND.',
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'TAG_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZUpdateTagRequest = UpdateTagInput;
export const ZUpdateTagResponse = Tag;
