/** Every `code` the API documents in its error bodies (spec section 7 plus the server's additions). */
export type ErrorCode =
  | 'UNAUTHORIZED'
  | 'VALIDATION_ERROR'
  | 'MERCHANT_NOT_FOUND'
  | 'TAG_NOT_FOUND'
  | 'INTEGRATION_NOT_FOUND'
  | 'DATABASE_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'ACCESS_DENIED'
  | 'EXTERNAL_SERVICE_ERROR'
  | 'TAG_NOT_LIVE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'STREAM_CONSUMER_TOO_SLOW'
  | 'WEBHOOK_NOT_FOUND'
  | 'WEBHOOK_DELIVERY_NOT_FOUND'
  | 'ERASURE_NOT_FOUND'
  | 'GOAL_NOT_FOUND'
  | 'LIMIT_EXCEEDED'
  | 'SESSION_SCOPE'
  | 'TEST_MODE_ONLY'
  | 'TAG_STATE_CONFLICT'
  | 'CLICKHOUSE_URL_REQUIRED'
  | 'STATS_OFF';

import type { DnsCheckDetails } from '../resources/dns-check.js';
import { parseRateLimit, type RateLimit } from './rate-limit.js';

/** A documented {@link ErrorCode}, or any other code a newer server may send. */
export type APIErrorCode = ErrorCode | (string & Record<never, never>);

/** Base class of every error this SDK throws. */
export class PartnerError extends Error {
  override name = 'PartnerError';
}

/** The server answered with a non-2xx status. Subclasses narrow it by status. */
export class APIError extends PartnerError {
  override name = 'APIError';
  /** HTTP status of the response. */
  readonly status: number;
  /** The body's `code` (e.g. `MERCHANT_NOT_FOUND`); `null` when the body carried none (e.g. not JSON). */
  readonly code: APIErrorCode | null;
  /** The `x-request-id` response header: quote it when reporting a problem. */
  readonly requestId: string | null;
  /** The response headers. */
  readonly headers: Headers;
  /** The parsed JSON body, or its raw text when it was not JSON. */
  readonly body: unknown;
  /**
   * The rate-limit state the response announced (see `parseRateLimit`), `undefined` when it sent
   * no rate-limit header. On a 429, `remaining` is 0 and `resetSeconds` says when calls resume.
   */
  readonly rateLimit: RateLimit | undefined;
  /**
   * The body's `details`, when it has them: on a failed tag verification, why DNS did not prove the
   * domain (`reason`), the record `expected`, the records `found` and `checkedAt`. `null` otherwise.
   */
  readonly details: DnsCheckDetails | null;

  constructor(status: number, message: string, code: APIErrorCode | null, headers: Headers, body: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
    this.body = body;
    this.details = detailsOf(body);
    this.requestId = headers.get('x-request-id');
    this.rateLimit = parseRateLimit(headers);
  }
}

/** `details` of an error body when it has the documented shape (an object with a `reason`). */
function detailsOf(body: unknown): DnsCheckDetails | null {
  if (body === null || typeof body !== 'object') return null;
  const details = (body as { details?: unknown }).details;
  if (details === null || typeof details !== 'object' || Array.isArray(details)) return null;
  return typeof (details as { reason?: unknown }).reason === 'string' ? (details as DnsCheckDetails) : null;
}

export class BadRequestError extends APIError {
  override name = 'BadRequestError';
  declare readonly status: 400;
}
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError';
  declare readonly status: 401;
}
export class PermissionDeniedError extends APIError {
  override name = 'PermissionDeniedError';
  declare readonly status: 403;
}
export class NotFoundError extends APIError {
  override name = 'NotFoundError';
  declare readonly status: 404;
}
export class ConflictError extends APIError {
  override name = 'ConflictError';
  declare readonly status: 409;
}
export class UnprocessableEntityError extends APIError {
  override name = 'UnprocessableEntityError';
  declare readonly status: 422;
}
export class RateLimitError extends APIError {
  override name = 'RateLimitError';
  declare readonly status: 429;
  /** How long the server asked to wait (`retry-after-ms` or `Retry-After`), in ms; `null` if it did not say. */
  readonly retryAfterMs: number | null;

  constructor(
    message: string,
    code: APIErrorCode | null,
    headers: Headers,
    body: unknown,
    retryAfterMs: number | null,
  ) {
    super(429, message, code, headers, body);
    this.retryAfterMs = retryAfterMs;
  }
}
export class InternalServerError extends APIError {
  override name = 'InternalServerError';
}

/** The request never got a response: DNS failure, refused or reset connection, and so on. */
export class APIConnectionError extends PartnerError {
  override name = 'APIConnectionError';
  constructor(message = 'Connection error.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No response arrived within `timeout` ms. */
export class APIConnectionTimeoutError extends APIConnectionError {
  override name = 'APIConnectionTimeoutError';
  constructor(message = 'Request timed out.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The caller's `signal` aborted the request (or the wait before a retry). Never retried. */
export class APIUserAbortError extends PartnerError {
  override name = 'APIUserAbortError';
  constructor(message = 'Request was aborted.', options?: { cause?: unknown }) {
    super(message, options);
  }
}
