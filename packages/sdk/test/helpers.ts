import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Sleep } from '../src/core/retry.js';
import { type ClientOptions, PartnerClient } from '../src/index.js';

export const BASE_URL = 'https://api.partner.test';
export const API_KEY = 'mp_live_test_key';

/** msw server shared by a test file; unhandled requests are errors. */
export const server = setupServer();

export function useMsw(): void {
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
}

/**
 * Replaces the sleep between retries with one that records the delay and returns at once (still
 * rejecting on an aborted signal, like the real one). Returns the recorded delays.
 */
export function useRecordedSleep(): number[] {
  const delays: number[] = [];
  beforeEach(() => {
    delays.length = 0;
    recordedSleep = async (ms, signal) => {
      delays.push(ms);
      if (signal?.aborted) throw signal.reason;
    };
  });
  afterEach(() => {
    recordedSleep = undefined;
  });
  return delays;
}

/** The sleep `makeClient` passes to its clients (the client's `sleep` option) while a file records. */
let recordedSleep: Sleep | undefined;

export function makeClient(options: ClientOptions = {}): PartnerClient {
  return new PartnerClient({ apiKey: API_KEY, baseURL: BASE_URL, sleep: recordedSleep, ...options });
}

export interface Captured {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

/** Reads what the SDK sent: method, URL, headers and the JSON body (if any). */
export async function capture(request: Request): Promise<Captured> {
  const text = await request.text();
  return {
    method: request.method,
    url: new URL(request.url),
    headers: request.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}

/** A JSON response with an `x-request-id`, as the server sends. */
export function reply(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return HttpResponse.json(body as Record<string, unknown>, {
    status: init.status ?? 200,
    headers: { 'x-request-id': 'req_test', ...init.headers },
  });
}

/** A handler answering each successive request with the next response builder (the last repeats). */
export function sequence(
  method: 'get' | 'post' | 'patch' | 'delete',
  path: string,
  responses: Array<() => Response>,
  seen: Captured[] = [],
): { handler: ReturnType<typeof http.get>; seen: Captured[] } {
  let calls = 0;
  const handler = http[method](`${BASE_URL}${path}`, async ({ request }) => {
    seen.push(await capture(request));
    const make = responses[Math.min(calls, responses.length - 1)];
    calls++;
    if (!make) throw new Error('no response configured');
    return make();
  });
  return { handler, seen };
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
