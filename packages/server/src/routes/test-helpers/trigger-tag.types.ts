import { Tag, TriggerTagInput } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const triggerTagMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/test/tags/{tagId}/trigger',
    operationId: 'test-tags-trigger',
    tags: ['Test mode'],
    summary: 'Trigger a tag event (test mode)',
    description:
      'Test keys (`mp_test_...`) only: drives a test-mode tag into the state `event` names, through the same ' +
      'transition a live tag takes, and sends its real webhook to your test-mode endpoints. `tag.disconnected` ' +
      'and `tag.reconnected` need a verified custom tag (in test mode every custom domain verifies unless its ' +
      'first label ends in a reason code such as `-record-not-found`); `tag.activated` a tag without events. ' +
      'Answers the tag after the change. A live key gets 403 TEST_MODE_ONLY.',
    protect: true,
  },
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'TEST_MODE_ONLY',
    'ACCESS_DENIED',
    'TAG_NOT_FOUND',
    'TAG_STATE_CONFLICT',
    'DATABASE_ERROR',
  ],
};

export const ZTriggerTagRequest = TriggerTagInput;
export const ZTriggerTagResponse = Tag;
