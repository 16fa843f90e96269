import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';

let server: TestServer;
let doc: Json;
beforeAll(async () => {
  server = await startTestServer();
  const res = await api(server).get('/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = res.body;
});
afterAll(() => server?.close());

/**
 * The operations of the spec (section 4) plus the public collector, with their success status and
 * the error statuses section 4 lists for them.
 */
const OPERATIONS: Array<{ method: string; path: string; success: string; specErrors: number[]; partner: boolean }> = [
  { method: 'get', path: '/v1/partners/merchant', success: '200', specErrors: [401, 500], partner: true },
  { method: 'post', path: '/v1/partners/merchant', success: '201', specErrors: [401, 500], partner: true },
  {
    method: 'post',
    path: '/v1/partners/tag/generate',
    success: '200',
    specErrors: [400, 401, 404, 500, 503],
    partner: true,
  },
  {
    method: 'post',
    path: '/v1/partners/tag/verify',
    success: '200',
    specErrors: [400, 401, 403, 404, 422, 500, 503],
    partner: true,
  },
  { method: 'get', path: '/v1/partners/events', success: '200', specErrors: [400, 401, 404, 500], partner: true },
  // Not in the spec: the public collection endpoint (409 TAG_NOT_LIVE, 503 when the event queue is full).
  { method: 'post', path: '/v1/collect', success: '202', specErrors: [400, 404, 409, 500, 503], partner: false },
];

/**
 * Statuses an operation may document beyond its spec list, each for a condition the spec leaves
 * open: 400 for invalid page/limit/name ("not shown"), 409 for a reused Idempotency-Key, 413/415
 * for request bodies, 429 for rate limits, 503 when the database does not answer and a retry is safe,
 * 403 SESSION_SCOPE for a merchant session token beyond its scope.
 */
const EXTRA_STATUSES = new Set([400, 403, 409, 413, 415, 429, 503]);

const operation = (method: string, path: string): Json => doc.paths?.[path]?.[method];

function errorStatuses(op: Json): number[] {
  return Object.keys(op.responses)
    .map(Number)
    .filter((status) => status >= 400)
    .sort((a, b) => a - b);
}

/** Every `$ref` in a JSON value. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refs(item, out);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') out.push(item);
      else refs(item, out);
    }
  }
  return out;
}

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
  });

  it('has the six operations on the exact spec paths and methods', () => {
    for (const { method, path } of OPERATIONS) {
      expect(operation(method, path), `${method.toUpperCase()} ${path}`).toBeDefined();
    }
    // No spec path is documented under another method.
    expect(Object.keys(doc.paths['/v1/partners/merchant']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/partners/tag/generate'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/partners/tag/verify'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/partners/events'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/v1/collect'])).toEqual(['post']);
  });

  it.each(OPERATIONS)('$method $path documents its success status only ($success)', ({ method, path, success }) => {
    const op = operation(method, path);
    const successes = Object.keys(op.responses).filter((status) => status.startsWith('2'));
    expect(successes).toEqual([success]);
    expect(op.responses[success].content['application/json'].schema).toBeDefined();
  });

  it.each(OPERATIONS)('$method $path documents the error statuses of the spec', ({ method, path, specErrors }) => {
    const documented = errorStatuses(operation(method, path));
    for (const status of specErrors) expect(documented, `${path} ${status}`).toContain(status);
    const extra = documented.filter((status) => !specErrors.includes(status));
    for (const status of extra) expect(EXTRA_STATUSES.has(status), `${path} documents ${status}`).toBe(true);
    if (method === 'post') expect(documented).toEqual(expect.arrayContaining([413, 415]));
  });

  it.each(OPERATIONS)('$method $path answers errors with the Error schema', ({ method, path }) => {
    const op = operation(method, path);
    for (const status of errorStatuses(op)) {
      const response = op.responses[String(status)];
      expect(response.description, `${path} ${status}`).toEqual(expect.any(String));
      const schema = response.content['application/json'].schema;
      const schemaRefs = refs(schema);
      expect(schemaRefs, `${path} ${status}`).toContain('#/components/schemas/Error');
      if (status === 401) {
        // The bearer-missing body is the spec's other auth shape.
        expect(schemaRefs).toContain('#/components/schemas/AuthError');
      }
    }
  });

  it('names the error codes of the spec in the error descriptions', () => {
    const text = (method: string, path: string, status: number) =>
      operation(method, path).responses[String(status)].description as string;
    expect(text('post', '/v1/partners/tag/verify', 403)).toContain('ACCESS_DENIED');
    expect(text('post', '/v1/partners/tag/verify', 404)).toContain('TAG_NOT_FOUND');
    expect(text('post', '/v1/partners/tag/verify', 503)).toContain('EXTERNAL_SERVICE_ERROR');
    expect(text('post', '/v1/partners/tag/verify', 422)).toContain('VALIDATION_ERROR');
    expect(text('post', '/v1/partners/tag/generate', 404)).toContain('MERCHANT_NOT_FOUND');
    expect(text('get', '/v1/partners/events', 404)).toContain('MERCHANT_NOT_FOUND');
    expect(text('get', '/v1/partners/merchant', 500)).toContain('DATABASE_ERROR');
  });

  it('defines Error as { message, code } and AuthError as { statusCode, message, error }', () => {
    const schemas = doc.components.schemas;
    expect(schemas.Error).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['message', 'code']),
      properties: { message: { type: 'string' }, code: expect.any(Object) },
    });
    const codeRef = schemas.Error.properties.code.$ref as string | undefined;
    const codeSchema = codeRef ? schemas[codeRef.replace('#/components/schemas/', '')] : schemas.Error.properties.code;
    expect(codeSchema.enum).toEqual(
      expect.arrayContaining([
        'UNAUTHORIZED',
        'VALIDATION_ERROR',
        'MERCHANT_NOT_FOUND',
        'TAG_NOT_FOUND',
        'INTEGRATION_NOT_FOUND',
        'DATABASE_ERROR',
        'SERVICE_UNAVAILABLE',
        'ACCESS_DENIED',
        'EXTERNAL_SERVICE_ERROR',
      ]),
    );
    expect(schemas.AuthError).toMatchObject({
      type: 'object',
      properties: { statusCode: expect.any(Object), message: expect.any(Object), error: expect.any(Object) },
    });
  });

  it('leaves no generated error.* schemas and no dangling references', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names.filter((name) => name.startsWith('error.'))).toEqual([]);
    const all = refs(doc);
    expect(all.filter((ref) => ref.includes('error.'))).toEqual([]);
    for (const ref of all) {
      const [, kind, name] = /^#\/components\/(schemas|headers)\/(.+)$/.exec(ref) ?? [];
      expect(kind, ref).toBeDefined();
      expect(Object.keys(doc.components[kind as string] ?? {}), ref).toContain(name);
    }
  });

  it.each(OPERATIONS)(
    '$method $path is secured by the bearer key exactly when it is a partner route',
    ({ method, path, partner }) => {
      const op = operation(method, path);
      if (partner) {
        // Merchant session tokens are a second scheme on the operations they may call (stats, tag status).
        expect(op.security).toEqual(
          op.security.length === 2 ? [{ Authorization: [] }, { MerchantSession: [] }] : [{ Authorization: [] }],
        );
      } else {
        expect(op.security ?? []).toEqual([]);
      }
      expect(doc.components.securitySchemes.Authorization).toMatchObject({ type: 'http', scheme: 'bearer' });
    },
  );

  it('documents the query parameters of the list endpoints with their defaults and bounds', () => {
    const params = (path: string) =>
      Object.fromEntries((operation('get', path).parameters as Json[]).map((p) => [p.name, p]));
    const merchants = params('/v1/partners/merchant');
    expect(merchants.page.schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(merchants.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 10 });

    const events = params('/v1/partners/events');
    expect(Object.keys(events).sort()).toEqual(
      ['cursor', 'endDate', 'events', 'limit', 'merchantId', 'muid', 'page', 'sortBy', 'sortOrder', 'startDate'].sort(),
    );
    expect(events.merchantId.required).toBe(true);
    expect(events.limit.schema).toMatchObject({ maximum: 100, default: 12 });
    expect(events.sortOrder.schema).toMatchObject({ enum: ['asc', 'desc'], default: 'desc' });
    expect(events.sortBy.schema).toMatchObject({ enum: ['event_time', 'event_name'], default: 'event_time' });
  });

  it('declares the Link header (rel="next") on the event list, and only there', () => {
    expect(operation('get', '/v1/partners/events').responses['200'].headers.Link).toEqual({
      $ref: '#/components/headers/NextLink',
    });
    expect(doc.components.headers.NextLink.description).toContain('rel="next"');
    expect(operation('get', '/v1/partners/merchant').responses['200'].headers.Link).toBeUndefined();
  });

  it('documents the request bodies of the spec', () => {
    const body = (path: string) => operation('post', path).requestBody.content['application/json'].schema;
    expect(body('/v1/partners/merchant').required).toEqual(['name']);
    expect(body('/v1/partners/tag/generate').required.slice().sort()).toEqual(['domain', 'merchantId']);
    expect(body('/v1/partners/tag/verify').required.slice().sort()).toEqual(['subdomain', 'tagId']);
    expect(body('/v1/collect').required.slice().sort()).toEqual(['events', 'tagId']);
  });

  it('serves the same document on every request', async () => {
    const again = await api(server).get('/openapi.json');
    expect(again.body).toEqual(doc);
  });
});
