import type { DnsCheckDetails, ErrorBody, ErrorCode } from '@partner/shared-schemas';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { ZodError } from 'zod';

/** Every failure the service can answer, with its HTTP status and public code. */
export const ERROR_TABLE = {
  UNAUTHORIZED: { status: 401, code: 'UNAUTHORIZED' },
  /** No bearer token at all: the spec's own 401 body (`{ statusCode, message, error }`, transport/http/respond.ts). */
  BEARER_TOKEN_MISSING: { status: 401, code: 'UNAUTHORIZED' },
  VALIDATION_ERROR: { status: 400, code: 'VALIDATION_ERROR' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, code: 'VALIDATION_ERROR' },
  DNS_VERIFICATION_FAILED: { status: 422, code: 'VALIDATION_ERROR' },
  TAG_CONFIGURATION_INCOMPLETE: { status: 500, code: 'VALIDATION_ERROR' },
  PAYLOAD_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE' },
  REQUEST_HEADERS_TOO_LARGE: { status: 431, code: 'VALIDATION_ERROR' },
  URI_TOO_LONG: { status: 414, code: 'VALIDATION_ERROR' },
  REQUEST_TIMEOUT: { status: 408, code: 'VALIDATION_ERROR' },
  ACCESS_DENIED: { status: 403, code: 'ACCESS_DENIED' },
  /** A merchant session token used beyond its scope: another endpoint, or another merchant. */
  SESSION_SCOPE: { status: 403, code: 'SESSION_SCOPE' },
  /** A test-mode helper called with a live key (docs/decisions/test-mode.md). */
  TEST_MODE_ONLY: { status: 403, code: 'TEST_MODE_ONLY' },
  /** A test-mode trigger whose tag is not in a state the event can follow (e.g. reconnect a connected tag). */
  TAG_STATE_CONFLICT: { status: 409, code: 'TAG_STATE_CONFLICT' },
  MERCHANT_NOT_FOUND: { status: 404, code: 'MERCHANT_NOT_FOUND' },
  TAG_NOT_FOUND: { status: 404, code: 'TAG_NOT_FOUND' },
  INTEGRATION_NOT_FOUND: { status: 404, code: 'INTEGRATION_NOT_FOUND' },
  NOT_FOUND: { status: 404, code: 'NOT_FOUND' },
  /** A known path asked with a method it does not answer; the answer carries `Allow`. */
  METHOD_NOT_ALLOWED: { status: 405, code: 'METHOD_NOT_ALLOWED' },
  WEBHOOK_NOT_FOUND: { status: 404, code: 'WEBHOOK_NOT_FOUND' },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, code: 'WEBHOOK_DELIVERY_NOT_FOUND' },
  ERASURE_NOT_FOUND: { status: 404, code: 'ERASURE_NOT_FOUND' },
  GOAL_NOT_FOUND: { status: 404, code: 'GOAL_NOT_FOUND' },
  TAG_NOT_LIVE: { status: 409, code: 'TAG_NOT_LIVE' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, code: 'IDEMPOTENCY_KEY_REUSED' },
  /** A per-partner cap (MAX_MERCHANTS_PER_PARTNER ...) is reached; the message names it and its value. */
  LIMIT_EXCEEDED: { status: 409, code: 'LIMIT_EXCEEDED' },
  RATE_LIMITED: { status: 429, code: 'RATE_LIMITED' },
  DATABASE_ERROR: { status: 500, code: 'DATABASE_ERROR' },
  /** The database did not answer in time or could not be reached, and a retry is safe (see `toAppError`). */
  DATABASE_UNAVAILABLE: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  INTERNAL: { status: 500, code: 'SERVICE_UNAVAILABLE' },
  SERVICE_UNAVAILABLE: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  /** `/readyz` when what this process needs does not answer (the body also carries the checks). */
  NOT_READY: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  EXTERNAL_SERVICE_ERROR: { status: 503, code: 'EXTERNAL_SERVICE_ERROR' },
  /** The statistics' ClickHouse did not answer in time (the answer carries Retry-After). */
  STATS_UNAVAILABLE: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  /** A process with no statistics store: several processes need CLICKHOUSE_URL. */
  STATS_NOT_CONFIGURED: { status: 503, code: 'CLICKHOUSE_URL_REQUIRED' },
  /** A process started with STATS=off. */
  STATS_OFF: { status: 503, code: 'STATS_OFF' },
  /** Sent as the final event of a stream whose consumer fell too far behind (never as a status). */
  STREAM_CONSUMER_TOO_SLOW: { status: 503, code: 'STREAM_CONSUMER_TOO_SLOW' },
} as const satisfies Record<string, { status: number; code: ErrorCode }>;

export type ErrorReason = keyof typeof ERROR_TABLE;

/** Messages for failures whose cause must never reach a client. */
const GENERIC_MESSAGES: Partial<Record<ErrorReason, string>> = {
  DATABASE_ERROR: 'A database operation failed. Retry the request later.',
  DATABASE_UNAVAILABLE: 'The database is not answering; retry shortly.',
  INTERNAL: 'The request could not be processed.',
};

/** The error every layer throws. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly reason: ErrorReason;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string> | undefined;
  /** Machine-readable diagnostics sent as the body's `details` (failed DNS verifications). */
  readonly details: DnsCheckDetails | undefined;

  constructor(
    reason: ErrorReason,
    message?: string,
    options?: { cause?: unknown; headers?: Record<string, string>; details?: DnsCheckDetails },
  ) {
    const entry = ERROR_TABLE[reason];
    super(message ?? GENERIC_MESSAGES[reason] ?? entry.code, { cause: options?.cause });
    this.reason = reason;
    this.headers = options?.headers;
    this.details = options?.details;
  }
}

/** The HTTP status of an error or reason as the table gives it. */
export function statusOf(error: AppError | ErrorReason): number {
  return ERROR_TABLE[typeof error === 'string' ? error : error.reason].status;
}

/** A failure of the server, not of the request (5xx): logged as an error, never stored as an idempotent answer. */
export function isServerFailure(error: AppError | ErrorReason | number): boolean {
  return (typeof error === 'number' ? error : statusOf(error)) >= 500;
}

/** The status and `{ message, code }` body (with `details` when the error has them) for an error. */
export function errorResponse(error: AppError): { status: number; body: ErrorBody } {
  const entry = ERROR_TABLE[error.reason];
  const body: ErrorBody = { message: error.message, code: entry.code };
  if (error.details) body.details = error.details;
  return { status: entry.status, body };
}

/** An error and its causes, outermost first (at most 8, no cycles). */
export function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

const CONNECTION_ERROR =
  /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|CONNECTION_|CONNECT_TIMEOUT|QUERY_DEADLINE|57P0|08)/;

/** Seconds a client is told to wait (Retry-After) when the database is unavailable. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/** 503 DATABASE_UNAVAILABLE with its Retry-After: the request was surely not applied. */
export function databaseUnavailable(cause: unknown): AppError {
  return new AppError('DATABASE_UNAVAILABLE', undefined, {
    cause,
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
}

/** The database is unreachable or did not answer within its deadline. */
const UNAVAILABLE =
  /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|CONNECTION_CLOSED|CONNECTION_DESTROYED|CONNECT_TIMEOUT|QUERY_DEADLINE|57014|57P0|53300|08)/;
/** ...and among those, the ones where the statement certainly did not take effect. */
const NOT_APPLIED = /^(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|CONNECT_TIMEOUT|57014|57P03|53300|08001|08004)$/;

function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether the database was unavailable, and if so whether the failed statement surely did not apply. */
export function databaseUnavailability(error: unknown): 'not-applied' | 'unknown-outcome' | null {
  let unavailable = false;
  for (const e of causes(error)) {
    const code = errorCode(e);
    if (code === undefined || !UNAVAILABLE.test(code)) continue;
    unavailable = true;
    if (NOT_APPLIED.test(code) || (code === 'QUERY_DEADLINE' && (e as { sent?: unknown }).sent === false)) {
      return 'not-applied';
    }
  }
  return unavailable ? 'unknown-outcome' : null;
}

export interface ToAppErrorOptions {
  /**
   * The request may be repeated without harm. Decides how a database that stopped answering mid-statement is reported:
   * retry-safe -> 503 SERVICE_UNAVAILABLE + Retry-After; otherwise 500 DATABASE_ERROR.
   */
  retrySafe?: boolean;
}

/** The database is unreachable. Retrying statement by statement is pointless then. */
export function isConnectionError(error: unknown): boolean {
  return causes(error).some((e) => {
    const code = (e as { code?: unknown } | null)?.code;
    return typeof code === 'string' && CONNECTION_ERROR.test(code);
  });
}

/** True for failures of the database driver: query errors, connection loss, PGlite errors. */
function isDatabaseError(error: unknown): boolean {
  return causes(error).some((e) => {
    if (!(e instanceof Error)) return false;
    if (e instanceof DrizzleQueryError || e.name === 'PostgresError') return true;
    // A closed PGlite throws this plain Error when a transaction begins (no query to wrap it).
    if (e.message === 'PGlite is closed') return true;
    const code = (e as { code?: unknown }).code;
    if ('severity' in e && typeof code === 'string') return true;
    return typeof code === 'string' && CONNECTION_ERROR.test(code);
  });
}

/** PostgreSQL cannot store U+0000 in text or jsonb: the client sent it, so it is a 400, not a database failure. */
function isUnstorableText(error: unknown): boolean {
  return causes(error).some((e) => {
    const code = (e as { code?: unknown } | null)?.code;
    return code === '22021' || code === '22P05';
  });
}

/** Why PostgreSQL refused a statement for the values it was given (see `dataRejection`). */
export interface DataRejection {
  /** The SQLSTATE, e.g. 22008. */
  sqlstate: string;
  /** A metric label from a small fixed set. */
  reason: 'datetime' | 'text' | 'format' | 'too_long' | 'missing_reference' | 'constraint' | 'too_large' | 'other_data';
  /** What a client or an operator is told (never the driver's message, which can quote other rows). */
  message: string;
}

const REJECTIONS: Record<string, Omit<DataRejection, 'sqlstate'>> = {
  '22007': { reason: 'datetime', message: 'a date-time is not valid' },
  '22008': { reason: 'datetime', message: 'a date-time is out of range (years 0001-9999 UTC)' },
  '22009': { reason: 'datetime', message: 'a date-time is out of range (years 0001-9999 UTC)' },
  '22021': { reason: 'text', message: 'text must not contain NUL (U+0000) characters' },
  '22P05': { reason: 'text', message: 'text must not contain NUL (U+0000) characters' },
  '22P02': { reason: 'format', message: 'a value has an invalid format' },
  '22001': { reason: 'too_long', message: 'a value is too long' },
  '23503': { reason: 'missing_reference', message: 'the tag or merchant no longer exists' },
  '54000': { reason: 'too_large', message: 'a value is too large to store' },
};

/**
 * PostgreSQL refused a statement because of the values it carried. Repeating the statement fails the same way, so
 * writers never retry it; everything else may pass later.
 */
export function dataRejection(error: unknown): DataRejection | null {
  for (const e of causes(error)) {
    const sqlstate = errorCode(e);
    if (sqlstate === undefined || !/^[0-9A-Z]{5}$/.test(sqlstate)) continue;
    const known = REJECTIONS[sqlstate];
    if (known) return { sqlstate, ...known };
    if (sqlstate.startsWith('22')) return { sqlstate, reason: 'other_data', message: 'a value was refused' };
    if (sqlstate.startsWith('23') && sqlstate !== '23505') {
      return { sqlstate, reason: 'constraint', message: 'a value breaks a constraint' };
    }
  }
  return null;
}

function describeZodError(error: ZodError): string {
  const parts = error.issues.slice(0, 5).map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : 'body';
    if (issue.code === 'unrecognized_keys') return `${where}: unknown field(s) ${issue.keys.join(', ')}`;
    return `${where}: ${issue.message}`;
  });
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : '';
  return `Invalid request: ${parts.join('; ')}${more}`;
}

/**
 * Maps anything thrown to an AppError. Unknown failures never expose their message; tRPC's own failures are recognised
 * by src/routes/procedures.ts's `appErrorOf`, which the transports that run tRPC use.
 */
export function toAppError(error: unknown, options: ToAppErrorOptions = {}): AppError {
  if (error instanceof AppError) return error;
  const chain = causes(error);
  const zod = chain.find((e): e is ZodError => e instanceof ZodError);
  if (zod) return new AppError('VALIDATION_ERROR', describeZodError(zod), { cause: error });
  const app = chain.find((e): e is AppError => e instanceof AppError);
  if (app) return app;
  if (isUnstorableText(error)) {
    return new AppError('VALIDATION_ERROR', 'Invalid request: text must not contain NUL (U+0000) characters', {
      cause: error,
    });
  }
  const unavailable = databaseUnavailability(error);
  if (unavailable === 'not-applied' || (unavailable === 'unknown-outcome' && options.retrySafe)) {
    return databaseUnavailable(error);
  }
  if (isDatabaseError(error)) return new AppError('DATABASE_ERROR', undefined, { cause: error });
  return new AppError('INTERNAL', undefined, { cause: error });
}
