import { Erasure, GetErasureInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const getErasureMeta: Meta = {
  openapi: {
    method: 'GET',
    path: '/v1/partners/erasures/{erasureId}',
    tags: ['Erasures'],
    summary: 'Get an erasure',
    description:
      'Its state (`pending`, `running`, `completed`) and how many events it has deleted. A missing erasure and ' +
      "another partner's answer 404 ERASURE_NOT_FOUND.",
    protect: true,
  },
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'ERASURE_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZGetErasureRequest = GetErasureInput;
export const ZGetErasureResponse = Erasure;
