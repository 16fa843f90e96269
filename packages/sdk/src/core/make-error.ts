import {
  APIError,
  type APIErrorCode,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from './errors.js';
import { parseRetryAfterMs } from './retry.js';

interface ParsedErrorBody {
  body: unknown;
  message: string;
  code: APIErrorCode | null;
}

/** `Unauthorized` -> `UNAUTHORIZED`, `Not Found` -> `NOT_FOUND`. */
function toCode(text: string): string {
  return text
    .trim()
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toUpperCase();
}

/**
 * Reads both error envelopes: `{ message, code }` and `{ statusCode, message, error }` (whose `error`,
 * e.g. `Unauthorized`, becomes the code `UNAUTHORIZED`). A body that is not JSON keeps its text as
 * the message and has no code.
 */
export function parseErrorBody(status: number, text: string): ParsedErrorBody {
  const fallback = `${status} status code${text.trim() ? '' : ' (no body)'}`;
  let json: unknown;
  try {
    json = text.trim() ? JSON.parse(text) : undefined;
  } catch {
    return { body: text, message: text.trim(), code: null };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { body: json ?? text, message: text.trim() || fallback, code: null };
  }
  const record = json as Record<string, unknown>;
  const errorText = typeof record.error === 'string' && record.error.trim() ? record.error : null;
  let message: string | null = null;
  if (typeof record.message === 'string' && record.message.trim()) message = record.message;
  else if (Array.isArray(record.message)) message = record.message.map(String).join('; ');
  const code = typeof record.code === 'string' && record.code ? record.code : errorText ? toCode(errorText) : null;
  return { body: json, message: message ?? errorText ?? fallback, code };
}

/** Builds the {@link APIError} subclass for `status` from the response text and headers. */
export function makeAPIError(status: number, text: string, headers: Headers): APIError {
  const { body, message, code } = parseErrorBody(status, text);
  switch (status) {
    case 400:
      return new BadRequestError(status, message, code, headers, body);
    case 401:
      return new AuthenticationError(status, message, code, headers, body);
    case 403:
      return new PermissionDeniedError(status, message, code, headers, body);
    case 404:
      return new NotFoundError(status, message, code, headers, body);
    case 409:
      return new ConflictError(status, message, code, headers, body);
    case 422:
      return new UnprocessableEntityError(status, message, code, headers, body);
    case 429:
      return new RateLimitError(message, code, headers, body, parseRetryAfterMs(headers));
  }
  if (status >= 500) return new InternalServerError(status, message, code, headers, body);
  return new APIError(status, message, code, headers, body);
}
