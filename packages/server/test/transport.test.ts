import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../src/routes/_app.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { type ApiResponse, api, leaksInternals } from './helpers/api.js';
import { MISSING_ID, preverifiedTag } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const GENERATED_REQUEST_ID = /^req_[0-9a-f]{32}$/;

/** One request of each kind of answer the server gives. */
const SAMPLES: Array<[string, () => Promise<ApiResponse>, number]> = [
  ['a success', () => api(server, server.partner.apiKey).get('/v1/partners/merchant'), 200],
  ['a created resource', () => api(server, server.partner.apiKey).post('/v1/partners/merchant', { name: 'T' }), 201],
  ['an unknown path', () => api(server).get('/nope'), 404],
  ['a missing token', () => api(server).get('/v1/partners/merchant'), 401],
  ['an invalid token', () => api(server, 'bad').get('/v1/partners/merchant'), 401],
  ['a validation error', () => api(server, server.partner.apiKey).get('/v1/partners/merchant?page=0'), 400],
  ['malformed JSON', () => api(server, server.partner.apiKey).post('/v1/partners/merchant', '{"name":'), 400],
  [
    'a not-found resource',
    () => api(server, server.partner.apiKey).get(`/v1/partners/events?merchantId=${MISSING_ID}`),
    404,
  ],
  [
    'an unsupported media type',
    () => api(server, server.partner.apiKey).request('POST', '/v1/partners/merchant', { body: new FormData() }),
    415,
  ],
  [
    'a body over 1 MB',
    () => api(server, server.partner.apiKey).post('/v1/partners/merchant', { name: 'x'.repeat(1024 * 1024) }),
    413,
  ],
  ['the health check', () => api(server).get('/healthz'), 200],
  ['the readiness check', () => api(server).get('/readyz'), 200],
  ['the OpenAPI document', () => api(server).get('/openapi.json'), 200],
  ['a tRPC error', () => api(server).get('/trpc/merchant.list'), 401],
];

describe('headers on every response', () => {
  it.each(SAMPLES)('%s carries a generated x-request-id, nosniff and a JSON content type', async (_, send, status) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.headers.get('x-request-id')).toMatch(GENERATED_REQUEST_ID);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('gives every request its own id', async () => {
    const ids = await Promise.all(
      Array.from({ length: 5 }, async () => (await api(server).get('/healthz')).headers.get('x-request-id')),
    );
    expect(new Set(ids).size).toBe(5);
  });

  it.each([
    ['a success', '/healthz', 200],
    ['a 404', '/nope', 404],
    ['a 401', '/v1/partners/merchant', 401],
  ])('echoes a sane x-request-id on %s', async (_, path, status) => {
    const res = await api(server).get(path, { 'x-request-id': 'client-req_42:a.b' });
    expect(res.status).toBe(status);
    expect(res.headers.get('x-request-id')).toBe('client-req_42:a.b');
  });

  it.each([
    ['300 characters', 'a'.repeat(300)],
    ['spaces', 'a b c'],
    ['quotes and angle brackets', '<script>"x"</script>'],
    ['non-ASCII percent junk', '%00%0d%0a'],
  ])('replaces an x-request-id with %s', async (_, given) => {
    const res = await api(server).get('/nope', { 'x-request-id': given });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toMatch(GENERATED_REQUEST_ID);
  });

  it('puts the request id into tRPC error data too', async () => {
    const res = await api(server).get('/trpc/merchant.list', { 'x-request-id': 'trace-7' });
    expect(res.headers.get('x-request-id')).toBe('trace-7');
    expect(res.body.error.data.requestId).toBe('trace-7');
  });
});

describe('error bodies', () => {
  it.each(SAMPLES.filter(([, , status]) => status >= 400 && status !== 401))(
    '%s answers exactly { message, code } without internals',
    async (_, send) => {
      const res = await send();
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message']);
      expect(typeof res.body.message).toBe('string');
      expect(leaksInternals(res.text)).toBe(false);
    },
  );

  it('answers an unknown path with 404 NOT_FOUND', async () => {
    for (const path of ['/nope', '/v1', '/v1/other', '/v2/partners/merchant', '/trpc-ish']) {
      const res = await api(server).get(path);
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String), code: 'NOT_FOUND' });
    }
    const authed = await api(server, server.partner.apiKey).get('/v1/partners/unknown');
    expect(authed.status).toBe(404);
    expect(authed.body).toEqual({ message: expect.any(String), code: 'NOT_FOUND' });
  });

  it.each([
    ['DELETE', '/v1/partners/merchant', 'GET, POST'],
    ['DELETE', '/v1/partners/tag/verify', 'POST'],
    ['PUT', '/v1/partners/tag/generate/', 'POST'],
    ['POST', `/v1/partners/tag/${randomUUID()}/snippet`, 'GET'],
    ['POST', '/v1/partners/events', 'GET'],
    ['POST', '/v1/partners/events/stream', 'GET'],
    ['GET', '/v1/collect', 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/readyz', 'GET, HEAD'],
    ['POST', '/openapi.json', 'GET'],
    ['POST', '/docs', 'GET, HEAD'],
  ])(
    'answers %s %s (a known path, another method) with 405 METHOD_NOT_ALLOWED and Allow: %s',
    async (method, path, allow) => {
      const res = await api(server, server.partner.apiKey).request(method, path);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.body).toEqual({ message: expect.stringContaining(method), code: 'METHOD_NOT_ALLOWED' });
    },
  );
});

describe('request bodies', () => {
  const key = () => server.partner.apiKey;

  it.each([
    ['a truncated object', '{"name":'],
    ['a trailing comma', '{"name":"x",}'],
    ['single quotes', "{'name':'x'}"],
    ['plain text', 'name=x'],
  ])('answers malformed JSON (%s) with 400 VALIDATION_ERROR', async (_, body) => {
    const res = await api(server, key()).post('/v1/partners/merchant', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: expect.any(String), code: 'VALIDATION_ERROR' });
    expect(leaksInternals(res.text)).toBe(false);
    expect(res.text).not.toMatch(/Unexpected token|position \d+/);
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;charset=UTF-8',
    'application/vnd.api+json; charset=utf-8',
  ])('accepts Content-Type %s', async (contentType) => {
    const res = await api(server, key()).post(
      '/v1/partners/merchant',
      { name: 'Typed' },
      { 'content-type': contentType },
    );
    expect(res.status).toBe(201);
  });

  it('reads UTF-8 names intact', async () => {
    const name = 'Café Zürich 東京 🛒';
    const created = await api(server, key()).post('/v1/partners/merchant', { name });
    expect(created.status).toBe(201);
    const list = await api(server, key()).get('/v1/partners/merchant?limit=100');
    expect(list.body.merchants.find((m: { merchantId: string }) => m.merchantId === created.body.merchantId).name).toBe(
      name,
    );
  });

  it.each([
    ['multipart/form-data', () => ({ body: new FormData() })],
    [
      'application/x-www-form-urlencoded',
      () => ({ body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    ],
    ['application/xml', () => ({ body: '<name>x</name>', headers: { 'content-type': 'application/xml' } })],
    // JSON sent as text (what fetch sends for a string body without a type): refused, as the document says.
    ['text/plain JSON', () => ({ body: '{"name":"x"}', headers: { 'content-type': 'text/plain;charset=UTF-8' } })],
  ])('answers %s with 415 { message, code }', async (_, init) => {
    const res = await api(server, key()).request('POST', '/v1/partners/merchant', init());
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ message: 'Content-Type must be application/json', code: 'VALIDATION_ERROR' });
  });

  it.each([
    ['POST', '/v1/partners/merchant'],
    ['PATCH', '/v1/partners/settings'],
    ['POST', '/v1/collect'],
  ])('answers a %s %s body without Content-Type, and text/plain, with 415', async (method, path) => {
    const body = path === '/v1/collect' ? `{"tagId":"${randomUUID()}","events":[]}` : '{"name":"x"}';
    const auth = { authorization: `Bearer ${key()}` };
    const untyped = await rawJson(method, path, body, auth);
    expect(untyped.status).toBe(415);
    expect(JSON.parse(untyped.text)).toEqual({ message: expect.any(String), code: 'VALIDATION_ERROR' });
    const text = await rawJson(method, path, body, { ...auth, 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
  });

  it('reads a request without a body and without Content-Type as an empty JSON object', async () => {
    const res = await rawJson('POST', '/v1/partners/merchant', undefined, { authorization: `Bearer ${key()}` });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({ message: expect.stringContaining('name'), code: 'VALIDATION_ERROR' });
  });

  it('answers a body over 1 MB with 413 { message, code }', async () => {
    const res = await api(server, key()).post('/v1/partners/merchant', { name: 'x'.repeat(1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ message: expect.any(String), code: expect.any(String) });
  });

  it('answers a chunked body over 1 MB (no Content-Length) with 413', async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        new URL('/v1/partners/merchant', server.url),
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key()}`,
            'content-type': 'application/json',
            'transfer-encoding': 'chunked',
          },
        },
        (response) => {
          let body = '';
          response.on('data', (chunk) => {
            body += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < 20) {
          sent++;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end('"}');
      };
      req.write('{"name":"');
      pump();
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ message: expect.any(String), code: expect.any(String) });
  });

  it.each([100, 10_000, 400_000])(
    'answers a body nested %i levels deep with 400 VALIDATION_ERROR and stays healthy',
    async (depth) => {
      const body = `{"name":"Deep","extra":${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const res = await api(server, key()).post('/v1/partners/merchant', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: expect.stringContaining('nested'), code: 'VALIDATION_ERROR' });
      expect((await api(server).get('/healthz')).status).toBe(200);
    },
  );

  it('reads a body just under 1 MB and validates it (400, not 413)', async () => {
    const res = await api(server, key()).post('/v1/partners/merchant', { name: 'x'.repeat(1000 * 1000) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('routing and health', () => {
  it('answers /healthz and /readyz with 200', async () => {
    const health = await api(server).get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await api(server).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'up', log: 'off' } });
  });

  it('routes paths case-insensitively', async () => {
    const res = await api(server, server.partner.apiKey).get('/V1/Partners/Merchant?limit=1');
    expect(res.status).toBe(200);
    expect(res.body.pagination.itemsPerPage).toBe(1);
    const noToken = await api(server).get('/V1/PARTNERS/MERCHANT');
    expect(noToken.status).toBe(401);
  });

  it('ignores unknown query parameters', async () => {
    const res = await api(server, server.partner.apiKey).get('/v1/partners/merchant?utm_source=x');
    expect(res.status).toBe(200);
  });
});

describe('database failure', () => {
  let broken: TestServer;
  let tagId: string;
  beforeAll(async () => {
    broken = await startTestServer();
    tagId = (await preverifiedTag(broken)).tagId;
    await broken.app.database.close();
  });
  afterAll(async () => {
    // The database handle is already closed: stop the HTTP and DNS servers only.
    await broken?.app.close(1000);
    await broken?.dns.close();
  });

  it.each([
    ['GET /v1/partners/merchant', () => api(broken, broken.partner.apiKey).get('/v1/partners/merchant')],
    [
      'POST /v1/partners/merchant',
      () => api(broken, broken.partner.apiKey).post('/v1/partners/merchant', { name: 'x' }),
    ],
    ['POST /v1/collect', () => api(broken).post('/v1/collect', { tagId, events: [{ event_name: 'PageView' }] })],
  ])('%s answers 500 DATABASE_ERROR without internals', async (_, send) => {
    const res = await send();
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ message: expect.any(String), code: 'DATABASE_ERROR' });
    expect(res.headers.get('x-request-id')).toMatch(GENERATED_REQUEST_ID);
    expect(leaksInternals(res.text)).toBe(false);
    expect(res.text).not.toMatch(/closed|ended|Failed query|api_keys/i);
  });

  it('answers /readyz with 503 while /healthz stays 200', async () => {
    expect((await api(broken).get('/readyz')).status).toBe(503);
    expect((await api(broken).get('/healthz')).status).toBe(200);
  });

  it('reports DATABASE_ERROR through tRPC without the cause', async () => {
    const client = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${broken.url}/trpc`, headers: { authorization: `Bearer ${broken.partner.apiKey}` } })],
    });
    const error = await client.merchant.list.query({}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TRPCClientError);
    const clientError = error as TRPCClientError<AppRouter>;
    expect(clientError.data).toMatchObject({ code: 'DATABASE_ERROR', httpStatus: 500 });
    expect(clientError.data).not.toHaveProperty('stack');
    expect(leaksInternals(clientError.message)).toBe(false);
  });
});

/** One request with exactly the headers given (fetch would add a text/plain type to a string body). */
function rawJson(
  method: string,
  path: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, server.url), { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.setHeader('content-length', Buffer.byteLength(body));
    req.end(body);
  });
}
