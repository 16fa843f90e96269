import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PartnerError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from '../src/index.js';
import { BASE_URL, makeClient, server, useMsw, useRecordedSleep } from './helpers.js';

useMsw();
useRecordedSleep();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';

function answer(status: number, body: string | null, headers: Record<string, string> = {}): void {
  server.use(
    http.post(
      `${BASE_URL}/v1/partners/tag/generate`,
      () => new HttpResponse(body, { status, headers: { 'x-request-id': `req_${status}`, ...headers } }),
    ),
  );
}

async function failure(): Promise<unknown> {
  return makeClient({ maxRetries: 0 })
    .tags.generate({ merchantId: MERCHANT_ID, domain: 'example.com' })
    .then(
      () => {
        throw new Error('expected a rejection');
      },
      (error: unknown) => error,
    );
}

const json = { 'content-type': 'application/json' };

describe('errors', () => {
  it.each([
    [400, BadRequestError, 'BadRequestError', 'VALIDATION_ERROR'],
    [401, AuthenticationError, 'AuthenticationError', 'UNAUTHORIZED'],
    [403, PermissionDeniedError, 'PermissionDeniedError', 'ACCESS_DENIED'],
    [404, NotFoundError, 'NotFoundError', 'MERCHANT_NOT_FOUND'],
    [409, ConflictError, 'ConflictError', 'IDEMPOTENCY_KEY_REUSED'],
    [422, UnprocessableEntityError, 'UnprocessableEntityError', 'VALIDATION_ERROR'],
    [429, RateLimitError, 'RateLimitError', 'RATE_LIMITED'],
    [500, InternalServerError, 'InternalServerError', 'DATABASE_ERROR'],
    [503, InternalServerError, 'InternalServerError', 'SERVICE_UNAVAILABLE'],
  ] as const)(
    '%i becomes %o with status, code, message, requestId, headers and body',
    async (status, Class, name, code) => {
      const body = { message: `boom ${status}`, code };
      answer(status, JSON.stringify(body), json);
      const error = await failure();
      expect(error).toBeInstanceOf(Class);
      expect(error).toBeInstanceOf(APIError);
      expect(error).toBeInstanceOf(PartnerError);
      expect(error).toBeInstanceOf(Error);
      const e = error as APIError;
      expect(e.name).toBe(name);
      expect(e.status).toBe(status);
      expect(e.code).toBe(code);
      expect(e.message).toBe(`boom ${status}`);
      expect(e.requestId).toBe(`req_${status}`);
      expect(e.headers.get('content-type')).toBe('application/json');
      expect(e.body).toEqual(body);
    },
  );

  it('exposes the body details of a failed verification, typed; null when absent or malformed', async () => {
    const details = {
      reason: 'WRONG_TARGET',
      expected: { type: 'CNAME', name: 'edge-abc.example.com', value: 'q7w2e9r4t6y1.tags.example' },
      found: [{ type: 'CNAME', name: 'edge-abc.example.com', value: 'elsewhere.example.net' }],
      checkedAt: '2026-11-23T20:00:00.000Z',
    };
    answer(422, JSON.stringify({ message: 'DNS verification failed', code: 'VALIDATION_ERROR', details }), json);
    const error = (await failure()) as UnprocessableEntityError;
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.details).toEqual(details);
    expect(error.details?.reason).toBe('WRONG_TARGET');
    expect(error.details?.found[0]?.value).toBe('elsewhere.example.net');
    for (const body of [{ message: 'x', code: 'VALIDATION_ERROR' }, { message: 'x', details: 'nope' }, ['x']]) {
      answer(422, JSON.stringify(body), json);
      expect(((await failure()) as APIError).details).toBeNull();
    }
  });

  it('an unlisted status is a plain APIError', async () => {
    answer(418, JSON.stringify({ message: 'teapot', code: 'TEAPOT' }), json);
    const error = await failure();
    expect(error).toBeInstanceOf(APIError);
    expect(error?.constructor).toBe(APIError);
    expect(error).toMatchObject({ status: 418, code: 'TEAPOT', message: 'teapot' });
  });

  it('reads the {statusCode, message, error} envelope of a missing bearer token as UNAUTHORIZED', async () => {
    answer(401, JSON.stringify({ statusCode: 401, message: 'Bearer token is required', error: 'Unauthorized' }), json);
    const error = await failure();
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: 'Bearer token is required' });
  });

  it('turns the `error` text of that envelope into a code for other statuses too', async () => {
    answer(404, JSON.stringify({ statusCode: 404, message: 'Cannot POST /x', error: 'Not Found' }), json);
    expect(await failure()).toMatchObject({ code: 'NOT_FOUND', message: 'Cannot POST /x' });
  });

  it('a non-JSON error body keeps the right class, with its text as the message', async () => {
    answer(502, '<html><body>502 Bad Gateway</body></html>', { 'content-type': 'text/html' });
    const error = await failure();
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({
      status: 502,
      code: null,
      message: '<html><body>502 Bad Gateway</body></html>',
      body: '<html><body>502 Bad Gateway</body></html>',
      requestId: 'req_502',
    });
  });

  it('a plain-text 404 is a NotFoundError', async () => {
    answer(404, 'no such route', { 'content-type': 'text/plain' });
    expect(await failure()).toMatchObject({ constructor: NotFoundError, message: 'no such route', code: null });
  });

  it('an empty error body gives a message naming the status', async () => {
    answer(403, null);
    const error = await failure();
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ message: '403 status code (no body)', code: null, body: '' });
  });

  it('a JSON error body without a message falls back to the status', async () => {
    answer(409, JSON.stringify({ code: 'CONFLICT' }), json);
    expect(await failure()).toMatchObject({ message: '409 status code', code: 'CONFLICT' });
  });

  it('requestId is null when the header is missing', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/partners/tag/generate`, () =>
        HttpResponse.json({ message: 'x', code: 'VALIDATION_ERROR' }, { status: 400 }),
      ),
    );
    expect(await failure()).toMatchObject({ requestId: null });
  });

  it('RateLimitError carries the requested delay, or null', async () => {
    answer(429, JSON.stringify({ message: 'slow down', code: 'RATE_LIMITED' }), { ...json, 'retry-after': '7' });
    expect(await failure()).toMatchObject({ retryAfterMs: 7000 });
    answer(429, JSON.stringify({ message: 'slow down', code: 'RATE_LIMITED' }), json);
    expect(await failure()).toMatchObject({ retryAfterMs: null });
  });

  it('connection errors form their own hierarchy outside APIError', () => {
    const timeout = new APIConnectionTimeoutError();
    expect(timeout).toBeInstanceOf(APIConnectionError);
    expect(timeout).toBeInstanceOf(PartnerError);
    expect(timeout).not.toBeInstanceOf(APIError);
    expect(timeout.name).toBe('APIConnectionTimeoutError');
    expect(timeout.message).toBe('Request timed out.');
    const abort = new APIUserAbortError();
    expect(abort).toBeInstanceOf(PartnerError);
    expect(abort).not.toBeInstanceOf(APIConnectionError);
    expect(abort.message).toBe('Request was aborted.');
    const cause = new TypeError('fetch failed');
    expect(new APIConnectionError(undefined, { cause }).cause).toBe(cause);
  });

  it('no ky error ever escapes: a timeout carries no ky cause', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/partners/tag/generate`, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return HttpResponse.json({});
      }),
    );
    const error = await makeClient({ maxRetries: 0, timeout: 30 })
      .tags.generate({ merchantId: MERCHANT_ID, domain: 'example.com' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect((error as Error).cause).toBeUndefined();
  });
});
