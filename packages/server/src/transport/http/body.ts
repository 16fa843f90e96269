import type { IncomingMessage } from 'node:http';
import { AppError } from '../../kernel/errors.js';
import { jsonInputProblem, MAX_BODY_BYTES, TOO_DEEP_MESSAGE } from '../../kernel/request-limits.js';

/** Whether a body's `Content-Type` declares JSON: `application/json` or a `+json` type. */
function isJsonContentType(header: string, textPlain: boolean): boolean {
  const type = header.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json') || (textPlain && type === 'text/plain');
}

/** A request that announces no body: no Transfer-Encoding and no (or a zero) Content-Length. */
function announcesNoBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) === 0);
}

/** Bytes of each body read by `readBody` (the collectors charge a chunked body's size once read). */
const bytesRead = new WeakMap<IncomingMessage, number>();

/** The size of the body `readBody` read from `req` (0 when none was read). */
export function bodyBytesRead(req: IncomingMessage): number {
  return bytesRead.get(req) ?? 0;
}

/** Reads the whole body (at most `limit` bytes) as text; 413 past the limit. */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new AppError('PAYLOAD_TOO_LARGE', 'Request body too large (limit 1 MB)'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new AppError('PAYLOAD_TOO_LARGE', 'Request body too large (limit 1 MB)'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      bytesRead.set(req, size);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (error) =>
      reject(new AppError('VALIDATION_ERROR', 'The request body could not be read', { cause: error })),
    );
  });
}

export interface JsonBodyOptions {
  limit?: number;
  /** Also read a `text/plain` body as JSON: only `POST /e`, which the tag sends without a CORS preflight. */
  textPlain?: boolean;
}

/** Reads and parses a JSON body. A body must say it is JSON; a request without one needs no type. */
export async function readJsonBody(
  req: IncomingMessage,
  { limit = MAX_BODY_BYTES, textPlain = false }: JsonBodyOptions = {},
): Promise<unknown> {
  const header = req.headers['content-type'];
  if (header ? !isJsonContentType(header, textPlain) : !announcesNoBody(req)) {
    req.resume();
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      textPlain ? 'Content-Type must be application/json or text/plain' : 'Content-Type must be application/json',
    );
  }
  const text = await readBody(req, limit);
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AppError('VALIDATION_ERROR', 'Malformed JSON in request body');
  }
  // Walks the text's well-formedness too, kept for the procedure's guard (routes/procedures.ts) when large.
  if (jsonInputProblem(parsed, text.length > 16_384) === 'too-deep') {
    throw new AppError('VALIDATION_ERROR', TOO_DEEP_MESSAGE);
  }
  return parsed;
}
