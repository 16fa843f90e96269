import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { type PartnerClient, VERSION } from '../src/index.js';
import { API_KEY, type Captured, makeClient, reply, sequence, server, UUID_V4, useMsw } from './helpers.js';

useMsw();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const TAG_ID = '0b8e3b0e-5f7a-4e58-8f43-5d3e1c2a9b77';

function expectCommonHeaders(req: Captured): void {
  expect(req.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
  expect(req.headers.get('accept')).toBe('application/json');
  expect(req.headers.get('x-partner-sdk')).toBe(`partner-sdk-ts/${pkg.version}`);
}

function expectJsonPost(req: Captured): void {
  expect(req.method).toBe('POST');
  expect(req.headers.get('content-type')).toBe('application/json');
  expect(req.headers.get('idempotency-key')).toMatch(UUID_V4);
}

describe('request shapes', () => {
  it('VERSION is the package version', () => {
    expect(VERSION).toBe(pkg.version);
  });

  it('merchants.list sends GET /v1/partners/merchant with page and limit', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/merchant', [
      () => reply({ merchants: [], pagination: { currentPage: 2, itemsPerPage: 5, totalItems: 0, totalPages: 0 } }),
    ]);
    server.use(handler);
    const page = await makeClient().merchants.list({ page: 2, limit: 5 });
    expect(page.data).toEqual([]);
    const [req] = seen;
    expect(req?.method).toBe('GET');
    expect(req?.url.pathname).toBe('/v1/partners/merchant');
    expect(Object.fromEntries(req?.url.searchParams ?? [])).toEqual({ page: '2', limit: '5' });
    expect(req?.headers.get('idempotency-key')).toBeNull();
    expect(req?.headers.get('content-type')).toBeNull();
    expectCommonHeaders(req as Captured);
  });

  it('merchants.list without params sends no query at all', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/merchant', [() => reply({ merchants: [] })]);
    server.use(handler);
    await makeClient().merchants.list();
    expect(seen[0]?.url.search).toBe('');
  });

  it.each([
    [
      'webhooks.rotateSecret',
      '/v1/partners/webhooks/w1/rotate-secret',
      (c: PartnerClient) => c.webhooks.rotateSecret('w1'),
    ],
    ['webhooks.test', '/v1/partners/webhooks/w1/test', (c: PartnerClient) => c.webhooks.test('w1')],
    [
      'webhooks.deliveries.retry',
      '/v1/partners/webhooks/w1/deliveries/d1/retry',
      (c: PartnerClient) => c.webhooks.deliveries.retry('w1', 'd1'),
    ],
  ])('%s POSTs no body and no Content-Type (the operation has no body)', async (_, path, call) => {
    const { handler, seen } = sequence('post', path, [() => reply({}, { status: 202 })]);
    server.use(handler);
    await call(makeClient());
    const req = seen[0] as Captured;
    expect(req.body).toBeUndefined();
    expect(req.headers.get('content-type')).toBeNull();
    expect(req.headers.get('idempotency-key')).toMatch(UUID_V4);
  });

  it('merchants.create sends POST with {name} and returns {merchantId}', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [
      () => reply({ merchantId: MERCHANT_ID }, { status: 201 }),
    ]);
    server.use(handler);
    const created = await makeClient().merchants.create({ name: 'Acme Store' });
    expect(created).toEqual({ merchantId: MERCHANT_ID });
    const req = seen[0] as Captured;
    expectJsonPost(req);
    expectCommonHeaders(req);
    expect(req.url.pathname).toBe('/v1/partners/merchant');
    expect(req.url.search).toBe('');
    expect(req.body).toEqual({ name: 'Acme Store' });
  });

  it('tags.generate sends POST /v1/partners/tag/generate with {merchantId, domain}', async () => {
    const response = {
      tagId: TAG_ID,
      domain: 'shop-example.com',
      record: { type: 'CNAME', name: 'mtag', value: 'tags.partner.test', ttl: 300 },
      status: 'inactive',
      message: 'New tag created successfully',
    };
    const { handler, seen } = sequence('post', '/v1/partners/tag/generate', [() => reply(response)]);
    server.use(handler);
    const generated = await makeClient().tags.generate({ merchantId: MERCHANT_ID, domain: 'shop-example.com' });
    expect(generated).toEqual(response);
    const req = seen[0] as Captured;
    expectJsonPost(req);
    expectCommonHeaders(req);
    expect(req.body).toEqual({ merchantId: MERCHANT_ID, domain: 'shop-example.com' });
  });

  it('tags.verify sends POST /v1/partners/tag/verify with {tagId, subdomain}', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/tag/verify', [() => reply({ verified: true })]);
    server.use(handler);
    const verified = await makeClient().tags.verify({ tagId: TAG_ID, subdomain: 'mtag.shop-example.com' });
    expect(verified).toEqual({ verified: true });
    const req = seen[0] as Captured;
    expectJsonPost(req);
    expectCommonHeaders(req);
    expect(req.body).toEqual({ tagId: TAG_ID, subdomain: 'mtag.shop-example.com' });
  });

  it('events.list encodes every filter: arrays joined, dates as ISO strings', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/events', [() => reply({ events: [] })]);
    server.use(handler);
    await makeClient().events.list({
      merchantId: MERCHANT_ID,
      page: 3,
      limit: 50,
      sortBy: 'event_name',
      sortOrder: 'asc',
      events: ['Purchase', 'PageView'],
      startDate: new Date('2026-01-01T00:00:00Z'),
      endDate: '2026-01-31',
    });
    const req = seen[0] as Captured;
    expect(req.method).toBe('GET');
    expect(req.url.pathname).toBe('/v1/partners/events');
    expect(Object.fromEntries(req.url.searchParams)).toEqual({
      merchantId: MERCHANT_ID,
      page: '3',
      limit: '50',
      sortBy: 'event_name',
      sortOrder: 'asc',
      events: 'Purchase,PageView',
      startDate: '2026-01-01T00:00:00.000Z',
      endDate: '2026-01-31',
    });
    expectCommonHeaders(req);
  });

  it('events.list accepts a comma string for events and omits undefined params', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/events', [() => reply({ events: [] })]);
    server.use(handler);
    await makeClient().events.list({ merchantId: MERCHANT_ID, events: 'Purchase, PageView', endDate: undefined });
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({
      merchantId: MERCHANT_ID,
      events: 'Purchase,PageView',
    });
  });

  it('events.list rejects an invalid Date without sending anything', async () => {
    const client = makeClient();
    await expect(client.events.list({ merchantId: MERCHANT_ID, startDate: new Date('nope') })).rejects.toThrow(
      /Invalid Date given for the `startDate` parameter/,
    );
  });

  it('a baseURL with a path prefix and a trailing slash is joined correctly', async () => {
    const { handler, seen } = sequence('get', '/api/v1/partners/merchant', [() => reply({ merchants: [] })]);
    server.use(handler);
    await makeClient({ baseURL: 'https://api.partner.test/api/' }).merchants.list();
    expect(seen[0]?.url.pathname).toBe('/api/v1/partners/merchant');
  });

  it('client headers and per-call headers are sent; null removes one; per-call wins', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [
      () => reply({ merchantId: MERCHANT_ID }, { status: 201 }),
    ]);
    server.use(handler);
    const client = makeClient({ headers: { 'X-Team': 'checkout', 'X-Env': 'staging' } });
    await client.merchants.create(
      { name: 'a' },
      { headers: { 'x-env': 'prod', 'X-Trace': 't-1', 'X-Partner-SDK': null }, idempotencyKey: 'my-key' },
    );
    const req = seen[0] as Captured;
    expect(req.headers.get('x-team')).toBe('checkout');
    expect(req.headers.get('x-env')).toBe('prod');
    expect(req.headers.get('x-trace')).toBe('t-1');
    expect(req.headers.get('x-partner-sdk')).toBeNull();
    expect(req.headers.get('idempotency-key')).toBe('my-key');
    expect(req.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
  });

  it('uses a custom fetch when given one', async () => {
    const urls: string[] = [];
    const client = makeClient({
      fetch: async (input) => {
        urls.push(input instanceof Request ? input.url : String(input));
        return new Response(JSON.stringify({ merchantId: MERCHANT_ID }), {
          status: 201,
          headers: { 'content-type': 'application/json' },
        });
      },
    });
    await expect(client.merchants.create({ name: 'x' })).resolves.toEqual({ merchantId: MERCHANT_ID });
    expect(urls).toEqual([`https://api.partner.test/v1/partners/merchant`]);
  });

  it('a 2xx body that is not JSON is a PartnerError naming the request id', async () => {
    const { handler } = sequence('post', '/v1/partners/merchant', [
      () => new Response('<html>ok</html>', { status: 201, headers: { 'x-request-id': 'req_html' } }),
    ]);
    server.use(handler);
    await expect(makeClient().merchants.create({ name: 'x' })).rejects.toThrow(/not JSON \(request id req_html\)/);
  });
});
