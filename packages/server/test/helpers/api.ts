import type { TestServer } from '../../src/testing/index.js';

/** A parsed JSON body. Tests assert it field by field, so it is deliberately loose. */
// biome-ignore lint/suspicious/noExplicitAny: JSON bodies in tests are asserted field by field
export type Json = any;

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: Json;
  /** The raw response text, to check that nothing internal leaks. */
  text: string;
}

export type HeaderMap = Record<string, string>;

export interface Api {
  get(path: string, headers?: HeaderMap): Promise<ApiResponse>;
  /** Objects are sent as JSON; strings are sent as they are (malformed JSON tests). */
  post(path: string, body?: unknown, headers?: HeaderMap): Promise<ApiResponse>;
  request(
    method: string,
    path: string,
    init?: { body?: string | Uint8Array | FormData; headers?: HeaderMap },
  ): Promise<ApiResponse>;
}

async function toResponse(res: Response): Promise<ApiResponse> {
  const text = await res.text();
  let body: Json;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * A small REST client over real HTTP. `key` undefined sends no Authorization header; a string
 * sends `Bearer <key>`. Headers passed per call override the defaults.
 */
export function api(server: Pick<TestServer, 'url'>, key?: string): Api {
  const auth: HeaderMap = key === undefined ? {} : { authorization: `Bearer ${key}` };
  const request: Api['request'] = async (method, path, init = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...auth, ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    return toResponse(res);
  };
  return {
    request,
    get: (path, headers) => request('GET', path, headers ? { headers } : {}),
    post: (path, body, headers) =>
      request('POST', path, {
        headers: { 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      }),
  };
}

/** Asserts nothing internal leaked: no stack traces, driver or ORM messages. */
export function leaksInternals(text: string): boolean {
  return /stack|\bat .+\.(ts|js):\d+|node_modules|drizzle|postgres|pglite|sql|select |insert |TypeError|ReferenceError/i.test(
    text,
  );
}
