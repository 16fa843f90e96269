import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, errorResponse } from '../../kernel/errors.js';
import { MAX_HEADER_BYTES } from './request-path.js';

/** Node's HTTP parser rejects some requests before any listener runs and by default answers with an empty body. */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError(
          'REQUEST_HEADERS_TOO_LARGE',
          `Request line or headers too large (limit ${MAX_HEADER_BYTES / 1024} KB)`,
        )
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('REQUEST_TIMEOUT', 'The request was not received in time')
        : new AppError('VALIDATION_ERROR', 'Malformed HTTP request');
  const { status, body } = errorResponse(appError);
  const payload = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(payload)}\r\n` +
      'x-content-type-options: nosniff\r\n' +
      'connection: close\r\n\r\n' +
      payload,
  );
}
