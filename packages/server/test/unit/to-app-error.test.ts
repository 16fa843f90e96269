// The error table's mapping (src/kernel/errors.ts) and its one bridge to tRPC (src/routes/procedures.ts), without a server.
import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AppError,
  errorResponse,
  isConnectionError,
  isServerFailure,
  statusOf,
  toAppError,
} from '../../src/kernel/errors.js';
import { appErrorOf, trpcCodeOf, trpcErrorOf } from '../../src/routes/procedures.js';

const coded = (code: string, cause?: unknown) => Object.assign(new Error(code, { cause }), { code });

describe('toAppError', () => {
  it('returns an AppError as it is, also from deep in a cause chain', () => {
    const app = new AppError('TAG_NOT_FOUND', 'Tag x not found');
    expect(toAppError(app)).toBe(app);
    expect(toAppError(new Error('outer', { cause: new Error('mid', { cause: app }) }))).toBe(app);
  });

  it('a zod failure is 400 VALIDATION_ERROR naming the field', () => {
    const parsed = z.object({ name: z.string() }).safeParse({ name: 1 });
    const { status, body } = errorResponse(toAppError(parsed.error));
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('name:') });
  });

  it('text PostgreSQL cannot store (NUL) is the client error 400, not a database failure', () => {
    expect(errorResponse(toAppError(coded('22021'))).status).toBe(400);
    expect(errorResponse(toAppError(coded('22P05'))).status).toBe(400);
  });

  it('an unknown failure is INTERNAL and never shows its message', () => {
    const appError = toAppError(new Error('secret internals at /etc/passwd'));
    expect(appError.reason).toBe('INTERNAL');
    expect(errorResponse(appError).body.message).not.toContain('secret');
  });
});

describe('the table', () => {
  it('isServerFailure: 5xx by error, reason or status', () => {
    expect(isServerFailure(new AppError('DATABASE_ERROR'))).toBe(true);
    expect(isServerFailure('NOT_READY')).toBe(true);
    expect(isServerFailure('RATE_LIMITED')).toBe(false);
    expect(isServerFailure(499)).toBe(false);
    expect(isServerFailure(500)).toBe(true);
  });

  it('readiness and the bearer-missing answer are rows of the table', () => {
    expect(statusOf('NOT_READY')).toBe(503);
    expect(errorResponse(new AppError('NOT_READY', 'x')).body.code).toBe('SERVICE_UNAVAILABLE');
    expect(statusOf('BEARER_TOKEN_MISSING')).toBe(401);
  });

  it('isConnectionError: the one connection-error test, anywhere in the cause chain', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '57P01', '08006']) {
      expect(isConnectionError(new Error('outer', { cause: coded(code) }))).toBe(true);
    }
    for (const code of ['23505', '57014', '42P01']) expect(isConnectionError(coded(code))).toBe(false);
  });
});

describe('tRPC bridge (src/routes/procedures.ts)', () => {
  it("maps the table's statuses to tRPC codes, the AppError as the cause", () => {
    expect(trpcCodeOf(new AppError('UNAUTHORIZED'))).toBe('UNAUTHORIZED');
    expect(trpcCodeOf(new AppError('DNS_VERIFICATION_FAILED'))).toBe('UNPROCESSABLE_CONTENT');
    expect(trpcCodeOf(new AppError('DATABASE_UNAVAILABLE'))).toBe('SERVICE_UNAVAILABLE');
    const app = new AppError('RATE_LIMITED', 'slow down', { headers: { 'retry-after': '3' } });
    const wrapped = trpcErrorOf(new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: app })) as TRPCError;
    expect(wrapped.code).toBe('TOO_MANY_REQUESTS');
    expect(toAppError(wrapped)).toBe(app);
  });

  it("recognises tRPC's own failures", () => {
    expect(appErrorOf(new TRPCError({ code: 'PARSE_ERROR' })).reason).toBe('VALIDATION_ERROR');
    expect(appErrorOf(new TRPCError({ code: 'NOT_FOUND' })).reason).toBe('NOT_FOUND');
    expect(appErrorOf(new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE' })).reason).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(appErrorOf(new TRPCError({ code: 'INTERNAL_SERVER_ERROR' })).reason).toBe('INTERNAL');
  });
});
