import { z } from 'zod';
import { DnsCheckDetails } from './dns-check.js';

/**
 * Every `code` an error body can carry. The first nine are the spec's (section 7); the rest are
 * our additions for conditions the spec does not cover (see docs/decisions/errors-and-statuses.md).
 */
export const ErrorCode = z
  .enum([
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'MERCHANT_NOT_FOUND',
    'TAG_NOT_FOUND',
    'INTEGRATION_NOT_FOUND',
    'DATABASE_ERROR',
    'SERVICE_UNAVAILABLE',
    'ACCESS_DENIED',
    'EXTERNAL_SERVICE_ERROR',
    'TAG_NOT_LIVE',
    'NOT_FOUND',
    'METHOD_NOT_ALLOWED',
    'PAYLOAD_TOO_LARGE',
    'RATE_LIMITED',
    'IDEMPOTENCY_KEY_REUSED',
    'STREAM_CONSUMER_TOO_SLOW',
    'WEBHOOK_NOT_FOUND',
    'WEBHOOK_DELIVERY_NOT_FOUND',
    'ERASURE_NOT_FOUND',
    'GOAL_NOT_FOUND',
    'LIMIT_EXCEEDED',
    'SESSION_SCOPE',
    'TEST_MODE_ONLY',
    'TAG_STATE_CONFLICT',
    'CLICKHOUSE_URL_REQUIRED',
    'STATS_OFF',
  ])
  .meta({ id: 'ErrorCode', description: 'Machine-readable error code.' });
export type ErrorCode = z.infer<typeof ErrorCode>;

/** The standard error body of every failed request (spec section 7). */
export const ErrorBody = z
  .object({
    message: z.string().meta({ description: 'Human-readable explanation.' }),
    code: ErrorCode,
    details: DnsCheckDetails.optional().meta({
      description: 'Machine-readable diagnostics, on failed DNS verifications (422 and 503 of tag verify).',
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The body of a 401 when no bearer token was sent at all (spec sections 5 and 7). */
export const AuthErrorBody = z
  .object({
    statusCode: z.literal(401),
    message: z.string(),
    error: z.literal('Unauthorized'),
  })
  .meta({ id: 'AuthError' });
export type AuthErrorBody = z.infer<typeof AuthErrorBody>;

export const BEARER_TOKEN_REQUIRED_MESSAGE = 'Bearer token is required';
