import { TriggerStatsInput, TriggerStatsResponse } from '@partner/shared-schemas';
import type { Meta } from '../procedures.js';

export const triggerStatsMeta: Meta = {
  openapi: {
    method: 'POST',
    path: '/v1/partners/test/merchants/{merchantId}/trigger',
    operationId: 'test-merchants-trigger',
    tags: ['Test mode'],
    summary: "Trigger a merchant's stats webhook (test mode)",
    description:
      "Test keys (`mp_test_...`) only: builds the test-mode merchant's `stats.digest` (its last whole week, " +
      'Monday to Sunday in its `timezone`) or `stats.spike` (the last whole hour against the same hour of the ' +
      'four weeks before, sent whatever the ratio) with its real figures, and sends it through the outbox to your ' +
      'test-mode endpoints subscribed to the type, whatever the settings; it uses up no week or day of the ' +
      'scheduled ones. Answers the message, its deliveries and the `data` sent. A live key gets 403 TEST_MODE_ONLY.',
    protect: true,
  },
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'TEST_MODE_ONLY',
    'MERCHANT_NOT_FOUND',
    'DATABASE_ERROR',
    'STATS_UNAVAILABLE',
    'STATS_NOT_CONFIGURED',
    'STATS_OFF',
  ],
};

export const ZTriggerStatsRequest = TriggerStatsInput;
export const ZTriggerStatsResponse = TriggerStatsResponse;
