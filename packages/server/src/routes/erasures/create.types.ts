import { CreateErasureInput, Erasure } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const createErasureMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/erasures',
    tags: ['Erasures'],
    summary: "Erase a visitor's data",
    description:
      'Answers 202 with the erasure (`status: pending`). In the background every event of the visitor (`muid`) of ' +
      'one merchant (`merchantId`) or of every merchant of the partner is deleted, from the statistics too, ' +
      'then an `erasure.completed` webhook is ' +
      'sent (documented bound: 10 minutes at 100M events). From now on the visitor’s events in that scope are ' +
      'dropped before storage while the erasure runs, and forever with `suppress: true`; the collector answers ' +
      "as usual, so a visitor cannot tell. Another partner's or a deleted merchant: 404 MERCHANT_NOT_FOUND.",
    protect: true,
  },
  successStatus: 202,
  successDescription: 'Accepted; the erasure runs in the background',
  errors: ['UNAUTHORIZED', 'VALIDATION_ERROR', 'MERCHANT_NOT_FOUND', 'DATABASE_ERROR'],
};

export const ZCreateErasureRequest = CreateErasureInput;
export const ZCreateErasureResponse = Erasure;
