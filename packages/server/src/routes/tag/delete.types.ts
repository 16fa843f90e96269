import { DeleteTagInput, DeleteTagResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const deleteTagMeta: Meta = {
  openapi: {
    method: 'DELETE',
    path: '/v1/partners/tag/{tagId}',
    tags: ['Tags'],
    summary: 'Delete a tag',
    description:
      'Deletes the tag: its collector host stops serving the script and taking events at once on every process ' +
      '(the CNAME record can then be removed), the monitor stops checking it, and the merchant may generate a tag ' +
      'again (for a new domain). The events it collected stay with the merchant. Sends `tag.deleted` with the tag ' +
      "as it was. A missing, already deleted or another partner's tag: 404 TAG_NOT_FOUND.",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'TAG_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZDeleteTagRequest = DeleteTagInput;
export const ZDeleteTagResponse = DeleteTagResponse;
