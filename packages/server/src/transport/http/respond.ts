import type { ServerResponse } from 'node:http';
import { type AuthErrorBody, BEARER_TOKEN_REQUIRED_MESSAGE } from '@partner/shared-schemas';
import { type AppError, errorResponse, statusOf } from '../../kernel/errors.js';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const payload = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(payload));
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(payload);
}

/** The REST body of an error: `{ message, code }`, or the spec's bearer-missing shape. */
export function restErrorBody(error: AppError): { status: number; body: unknown } {
  if (error.reason === 'BEARER_TOKEN_MISSING') {
    const status = statusOf(error);
    const body: AuthErrorBody = { statusCode: 401, message: BEARER_TOKEN_REQUIRED_MESSAGE, error: 'Unauthorized' };
    return { status, body };
  }
  return errorResponse(error);
}

export function sendError(res: ServerResponse, error: AppError): void {
  const { status, body } = restErrorBody(error);
  sendJson(res, status, body, error.headers);
}
