import { GetTagInput, Tag } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const getTagMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/tag/{tagId}',
    tags: ['Tags'],
    summary: 'Get a tag',
    description:
      'One tag in full: its status and flags, its CNAME record, when it was verified and received events, and the ' +
      "monitor's view: the last DNS check (`lastCheck`, with the records found) and when the next one runs " +
      "(`nextCheckAt`). A missing tag and another partner's merchant's tag both answer 404 TAG_NOT_FOUND.",
    protect: true,
  },
  sessionAccess: 'merchant',
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'TAG_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZGetTagRequest = GetTagInput;
export const ZGetTagResponse = Tag;
