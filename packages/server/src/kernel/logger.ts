import pino from 'pino';
import type { Env } from './env.js';

export type Logger = pino.Logger;

/** The longest error message a log line keeps (a message can quote what it failed on). */
const MAX_MESSAGE = 300;
/** How deep a chain of causes is followed. */
const MAX_CAUSES = 4;

interface LoggedError {
  type: string;
  message: string;
  /** A driver's or the error table's code (PostgreSQL SQLSTATE, AppError reason, tRPC code). */
  code?: string;
  stack?: string;
  /** A failed statement: its parameters by count and size only, never their values. */
  query?: { parameters: number; bytes: number };
  cause?: LoggedError;
}

function byteLength(value: unknown): number {
  try {
    return Buffer.byteLength(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), 'utf8');
  } catch {
    return 0;
  }
}

/** An error as a log line may hold it: type, message, code, the stack's frames, and the cause chain the same way. */
function serializeError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error)) {
    return { type: typeof error, message: `(a thrown ${typeof error}, ${byteLength(error)} bytes)` };
  }
  const record = error as Error & { code?: unknown; reason?: unknown; params?: unknown; query?: unknown };
  const failedQuery = typeof record.query === 'string' && Array.isArray(record.params);
  // drizzle's message is the statement and every parameter; a driver's (PGlite's error also holds
  // `query` and `params`) is the database's own message, kept like any other (capped).
  const message = error.message.startsWith('Failed query:')
    ? 'Failed query'
    : error.message.length > MAX_MESSAGE
      ? `${error.message.slice(0, MAX_MESSAGE)}… (${error.message.length} characters)`
      : error.message;
  const out: LoggedError = { type: error.name || error.constructor?.name || 'Error', message };
  const code = typeof record.reason === 'string' ? record.reason : record.code;
  if (typeof code === 'string' || typeof code === 'number') out.code = String(code);
  // The frames only: a stack's first lines repeat the message.
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  if (frames.length > 0) out.stack = `${out.type}: ${message}\n${frames.join('\n')}`;
  if (failedQuery) {
    const params = record.params as unknown[];
    out.query = { parameters: params.length, bytes: params.reduce<number>((n, p) => n + byteLength(p), 0) };
  }
  if (error.cause !== undefined && depth < MAX_CAUSES) out.cause = serializeError(error.cause, depth + 1);
  return out;
}

/** Structured JSON logs. */
export function createLogger(env: Pick<Env, 'LOG_LEVEL'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: env.LOG_LEVEL,
      base: undefined,
      serializers: { err: serializeError },
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', '*.apiKey'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
