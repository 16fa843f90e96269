import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { deadlineError } from '../../src/db/deadline.js';
import { databaseUnavailability, errorResponse, toAppError } from '../../src/kernel/errors.js';

const wrapped = (cause: Error) => new DrizzleQueryError('select 1', [], cause);
const coded = (code: string) => Object.assign(new Error(code), { code });

describe('an unavailable database: 503 when a retry is safe, DATABASE_ERROR otherwise', () => {
  it('classifies what surely did not apply and what has an unknown outcome', () => {
    expect(databaseUnavailability(wrapped(coded('ECONNREFUSED')))).toBe('not-applied');
    expect(databaseUnavailability(wrapped(coded('CONNECT_TIMEOUT')))).toBe('not-applied');
    expect(databaseUnavailability(wrapped(coded('57014')))).toBe('not-applied');
    expect(databaseUnavailability(wrapped(deadlineError(1500, false)))).toBe('not-applied');
    expect(databaseUnavailability(wrapped(deadlineError(1500, true)))).toBe('unknown-outcome');
    expect(databaseUnavailability(wrapped(coded('ECONNRESET')))).toBe('unknown-outcome');
    expect(databaseUnavailability(wrapped(coded('CONNECTION_CLOSED')))).toBe('unknown-outcome');
    expect(databaseUnavailability(wrapped(coded('23505')))).toBeNull();
    expect(databaseUnavailability(new Error('x'))).toBeNull();
  });

  it('answers 503 + Retry-After for a retry-safe request or a statement that never applied', () => {
    for (const [error, retrySafe] of [
      [wrapped(deadlineError(1500, true)), true],
      [wrapped(deadlineError(1500, false)), false],
      [wrapped(coded('ECONNREFUSED')), false],
    ] as const) {
      const appError = toAppError(error, { retrySafe });
      expect(errorResponse(appError)).toEqual({
        status: 503,
        body: { message: expect.any(String), code: 'SERVICE_UNAVAILABLE' },
      });
      expect(appError.headers).toEqual({ 'retry-after': '2' });
    }
  });

  it('answers 500 DATABASE_ERROR for a write whose statement was in flight', () => {
    for (const error of [wrapped(deadlineError(1500, true)), wrapped(coded('ECONNRESET'))]) {
      expect(errorResponse(toAppError(error)).body.code).toBe('DATABASE_ERROR');
      expect(errorResponse(toAppError(error, { retrySafe: false })).status).toBe(500);
    }
    expect(errorResponse(toAppError(wrapped(coded('23502')), { retrySafe: true })).body.code).toBe('DATABASE_ERROR');
  });
});
