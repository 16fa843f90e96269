// Issue 35: every call shows its response. `.withResponse()` gives the parsed data with the raw
// Response, its x-request-id and the rate-limit state; `.asResponse()` the raw Response, body
// unread; list calls stay awaitable and iterable, and every page carries its response too.
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { APIPromise, NotFoundError, PagePromise, PartnerError, parseRateLimit, RateLimitError } from '../src/index.js';
import { BASE_URL, makeClient, reply, sequence, server, useMsw, useRecordedSleep } from './helpers.js';

useMsw();
useRecordedSleep();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
/** What this API sends on every rate-limited call (packages/server/src/http/rate-limit.ts). */
const SERVER_LIMIT_HEADERS = { 'RateLimit-Limit': '600', 'RateLimit-Remaining': '597', 'RateLimit-Reset': '42' };

const created =
  (headers: Record<string, string> = {}) =>
  () =>
    reply({ merchantId: MERCHANT_ID }, { status: 201, headers: { 'x-request-id': 'req_create_1', ...headers } });

const merchant = (i: number) => ({
  merchantId: `m${i}`,
  name: `M${i}`,
  createdAt: '2026-01-01T00:00:00.000Z',
  tags: [],
});
const merchantsPage = (page: number, totalPages: number) =>
  reply(
    {
      merchants: [merchant(page)],
      pagination: {
        currentPage: page,
        itemsPerPage: 1,
        totalItems: totalPages,
        totalPages,
        hasNextPage: page < totalPages,
        hasPreviousPage: page > 1,
      },
    },
    {
      headers: {
        'x-request-id': `req_page_${page}`,
        'RateLimit-Limit': '600',
        'RateLimit-Remaining': String(600 - page),
        'RateLimit-Reset': '30',
      },
    },
  );

function merchantPages(totalPages: number): string[] {
  const pages: string[] = [];
  server.use(
    http.get(`${BASE_URL}/v1/partners/merchant`, ({ request }) => {
      const page = Number(new URL(request.url).searchParams.get('page') ?? '1');
      pages.push(String(page));
      return merchantsPage(page, totalPages);
    }),
  );
  return pages;
}

describe('withResponse()', () => {
  it('gives the data, the raw Response, its x-request-id and the rate-limit state', async () => {
    server.use(sequence('post', '/v1/partners/merchant', [created(SERVER_LIMIT_HEADERS)]).handler);
    const before = Date.now();
    const { data, response, requestId, rateLimit } = await makeClient()
      .merchants.create({ name: 'Acme' })
      .withResponse();
    expect(data).toEqual({ merchantId: MERCHANT_ID });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(201);
    expect(response.url).toBe(`${BASE_URL}/v1/partners/merchant`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(requestId).toBe('req_create_1');
    expect(rateLimit).toMatchObject({
      limit: 600,
      remaining: 597,
      resetSeconds: 42,
      windowSeconds: null,
      policy: null,
      source: 'RateLimit-*',
    });
    const resetAt = rateLimit?.resetAt?.getTime() ?? 0;
    expect(resetAt).toBeGreaterThanOrEqual(before + 42_000);
    expect(resetAt).toBeLessThanOrEqual(Date.now() + 42_000);
  });

  it('requestId is null and rateLimit undefined when the response has neither header', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/tag/t1/snippet`, () =>
        HttpResponse.json({
          tagId: 't1',
          collectorHost: 'c.example',
          scriptUrl: 'https://c.example/t.js',
          html: '<script>',
        }),
      ),
    );
    const result = await makeClient().tags.snippet('t1').withResponse();
    expect(result.data.tagId).toBe('t1');
    expect(result.requestId).toBeNull();
    expect(result.rateLimit).toBeUndefined();
  });

  it('after retries: the response of the attempt that succeeded', async () => {
    const fail = () =>
      reply({ message: 'busy', code: 'SERVICE_UNAVAILABLE' }, { status: 503, headers: { 'x-request-id': 'req_503' } });
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [fail, created()]);
    server.use(handler);
    const { requestId, response } = await makeClient().merchants.create({ name: 'Acme' }).withResponse();
    expect(seen).toHaveLength(2);
    expect(requestId).toBe('req_create_1');
    expect(response.status).toBe(201);
  });

  it('a failed call rejects withResponse() with the same APIError as awaiting it', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/tag/missing`, () =>
        reply(
          { message: 'Tag not found', code: 'TAG_NOT_FOUND' },
          { status: 404, headers: { 'x-request-id': 'req_404' } },
        ),
      ),
    );
    const call = makeClient().tags.retrieve('missing');
    const [viaResponse, viaAwait] = await Promise.all([
      call.withResponse().catch((e: unknown) => e),
      call.then(
        () => null,
        (e: unknown) => e,
      ),
    ]);
    expect(viaResponse).toBeInstanceOf(NotFoundError);
    expect(viaResponse).toBe(viaAwait);
    expect((viaResponse as NotFoundError).requestId).toBe('req_404');
  });

  it('one request whichever way the answer is read; await still gives the data', async () => {
    const { handler, seen } = sequence('post', '/v1/partners/merchant', [created()]);
    server.use(handler);
    const call = makeClient().merchants.create({ name: 'Acme' });
    expect(call).toBeInstanceOf(APIPromise);
    expect(call).toBeInstanceOf(Promise);
    const [data, withResponse, raw] = await Promise.all([call, call.withResponse(), call.asResponse()]);
    expect(data).toEqual({ merchantId: MERCHANT_ID });
    expect(withResponse.data).toBe(data);
    expect(await raw.json()).toEqual({ merchantId: MERCHANT_ID });
    expect(seen).toHaveLength(1);
    // then/catch/finally give plain promises (no APIPromise made from an executor).
    expect(call.then((value) => value)).not.toBeInstanceOf(APIPromise);
    await expect(call.finally(() => undefined)).resolves.toEqual(data);
  });

  it('events.send: data is what the method returns (accepted and the ids it made)', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/collect`, () =>
        reply({ accepted: 1 }, { status: 202, headers: { 'x-request-id': 'req_collect' } }),
      ),
    );
    const { data, requestId, response } = await makeClient()
      .events.send({ tagId: 't', events: [{ event_name: 'Purchase' }] })
      .withResponse();
    expect(data.accepted).toBe(1);
    expect(data.ids).toEqual([expect.stringMatching(/^evt_/)]);
    expect(requestId).toBe('req_collect');
    expect(response.status).toBe(202);
  });

  it('events.send: an invalid Date rejects (it does not throw) and sends nothing', async () => {
    let calls = 0;
    server.use(
      http.post(`${BASE_URL}/v1/collect`, () => {
        calls++;
        return reply({ accepted: 1 }, { status: 202 });
      }),
    );
    const call = makeClient().events.send({
      tagId: 't',
      events: [{ event_name: 'x', event_time: new Date(Number.NaN) }],
    });
    await expect(call.withResponse()).rejects.toBeInstanceOf(RangeError);
    await expect(call).rejects.toBeInstanceOf(RangeError);
    expect(calls).toBe(0);
  });
});

describe('asResponse()', () => {
  it('gives the raw Response with its body unread, nothing parsed', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/partners/merchant`, () =>
        HttpResponse.text('{"merchantId": "kept as sent"}', {
          status: 201,
          headers: { 'content-type': 'application/json', 'x-request-id': 'req_raw' },
        }),
      ),
    );
    const response = await makeClient().merchants.create({ name: 'Acme' }).asResponse();
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe('req_raw');
    expect(response.bodyUsed).toBe(false);
    expect(await response.text()).toBe('{"merchantId": "kept as sent"}');
  });

  it('does not parse: a 2xx body that is not JSON rejects await, not asResponse()', async () => {
    server.use(http.get(`${BASE_URL}/v1/partners/tag/t1`, () => HttpResponse.text('<html>proxy</html>')));
    const call = makeClient().tags.retrieve('t1');
    const response = await call.asResponse();
    expect(await response.text()).toBe('<html>proxy</html>');
    await expect(call).rejects.toBeInstanceOf(PartnerError);
  });

  it('a non-2xx answer rejects with its APIError', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/tag/missing`, () =>
        reply({ message: 'Tag not found', code: 'TAG_NOT_FOUND' }, { status: 404 }),
      ),
    );
    await expect(makeClient().tags.retrieve('missing').asResponse()).rejects.toBeInstanceOf(NotFoundError);
  });

  it('asked for after the answer arrived, it still has a readable body', async () => {
    server.use(sequence('post', '/v1/partners/merchant', [created()]).handler);
    const call = makeClient().merchants.create({ name: 'Acme' });
    await call;
    const response = await call.asResponse();
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe('req_create_1');
    expect(await response.json()).toEqual({ merchantId: MERCHANT_ID });
  });

  it('a 204 (webhooks.delete) resolves with an empty response; await gives undefined', async () => {
    server.use(
      http.delete(
        `${BASE_URL}/v1/partners/webhooks/w1`,
        () => new HttpResponse(null, { status: 204, headers: { 'x-request-id': 'req_del' } }),
      ),
    );
    const call = makeClient().webhooks.delete('w1');
    const { data, requestId, response } = await call.withResponse();
    expect(data).toBeUndefined();
    expect(requestId).toBe('req_del');
    expect(response.status).toBe(204);
    expect(await call.asResponse().then((r) => r.text())).toBe('');
  });
});

describe('list(): PagePromise and pages show their responses', () => {
  it('withResponse() on the list gives the first page with its response; it still iterates', async () => {
    const pages = merchantPages(3);
    const call = makeClient({ prefetchPages: false }).merchants.list({ limit: 1 });
    expect(call).toBeInstanceOf(PagePromise);
    const { data: page, requestId, rateLimit, response } = await call.withResponse();
    expect(page.data).toEqual([merchant(1)]);
    expect(requestId).toBe('req_page_1');
    expect(response.status).toBe(200);
    expect(rateLimit).toMatchObject({ limit: 600, remaining: 599, resetSeconds: 30, source: 'RateLimit-*' });
    const all = [];
    for await (const item of call) all.push(item.merchantId);
    expect(all).toEqual(['m1', 'm2', 'm3']);
    expect(pages).toEqual(['1', '2', '3']);
  });

  it('every page exposes its own response, request id and rate-limit state', async () => {
    merchantPages(3);
    const first = await makeClient().merchants.list({ limit: 1 });
    const seen: Array<[string | null, number | null | undefined, number]> = [];
    for await (const page of first.iterPages()) {
      seen.push([page.requestId, page.rateLimit?.remaining, page.response.status]);
    }
    expect(seen).toEqual([
      ['req_page_1', 599, 200],
      ['req_page_2', 598, 200],
      ['req_page_3', 597, 200],
    ]);
    const second = await first.getNextPage();
    expect(second.requestId).toBe('req_page_2');
  });

  it('asResponse() on the list gives the first page’s raw Response, body unread', async () => {
    merchantPages(2);
    const response = await makeClient().merchants.list({ limit: 1 }).asResponse();
    expect(response.headers.get('x-request-id')).toBe('req_page_1');
    expect(response.bodyUsed).toBe(false);
    expect(((await response.json()) as { merchants: unknown[] }).merchants).toEqual([merchant(1)]);
  });
});

describe('list(): asResponse() alone', () => {
  it('a failing list rejects asResponse() only (vitest fails the run on an unhandled rejection)', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, () =>
        reply({ message: 'Merchant not found', code: 'MERCHANT_NOT_FOUND' }, { status: 404 }),
      ),
    );
    await expect(makeClient().events.list({ merchantId: 'm' }).asResponse()).rejects.toBeInstanceOf(NotFoundError);
    await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it('a first page that is not JSON: asResponse() gives its body, await rejects', async () => {
    server.use(http.get(`${BASE_URL}/v1/partners/merchant`, () => HttpResponse.text('<html>maintenance</html>')));
    const call = makeClient().merchants.list();
    expect(await call.asResponse().then((r) => r.text())).toBe('<html>maintenance</html>');
    await expect(call).rejects.toBeInstanceOf(PartnerError);
  });

  it('asked for after the first page arrived, it still has a readable body', async () => {
    merchantPages(1);
    const call = makeClient().merchants.list({ limit: 1 });
    const page = await call;
    const response = await call.asResponse();
    expect(response.headers.get('x-request-id')).toBe(page.requestId);
    expect(((await response.json()) as { merchants: unknown[] }).merchants).toEqual(page.data);
  });
});

describe('rate-limit headers: both forms, read from real responses', () => {
  const cases: Array<[string, Record<string, string>, Record<string, unknown>]> = [
    [
      'IETF structured RateLimit + RateLimit-Policy (draft -08 and later)',
      { RateLimit: '"default";r=50;t=30', 'RateLimit-Policy': '"default";q=100;w=60' },
      { limit: 100, remaining: 50, resetSeconds: 30, windowSeconds: 60, policy: 'default', source: 'RateLimit' },
    ],
    [
      'IETF structured, two policies: the one with the fewest requests left',
      {
        RateLimit: '"burst";r=40;t=1, "daily";r=3;t=3600',
        'RateLimit-Policy': '"burst";q=50;w=1, "daily";q=1000;w=86400',
      },
      { limit: 1000, remaining: 3, resetSeconds: 3600, windowSeconds: 86400, policy: 'daily', source: 'RateLimit' },
    ],
    [
      'IETF draft -07 dictionary',
      { RateLimit: 'limit=100, remaining=7, reset=5', 'RateLimit-Policy': '100;w=10' },
      { limit: 100, remaining: 7, resetSeconds: 5, windowSeconds: 10, policy: null, source: 'RateLimit' },
    ],
    [
      'RateLimit-Limit / -Remaining / -Reset (what this API sends)',
      SERVER_LIMIT_HEADERS,
      { limit: 600, remaining: 597, resetSeconds: 42, windowSeconds: null, source: 'RateLimit-*' },
    ],
    [
      'RateLimit-Limit with a quota policy (w=)',
      { 'RateLimit-Limit': '100, 100;w=60', 'RateLimit-Remaining': '99', 'RateLimit-Reset': '59' },
      { limit: 100, remaining: 99, resetSeconds: 59, windowSeconds: 60, source: 'RateLimit-*' },
    ],
    [
      'X-RateLimit-* with a delay in seconds',
      { 'X-RateLimit-Limit': '5000', 'X-RateLimit-Remaining': '4999', 'X-RateLimit-Reset': '12' },
      { limit: 5000, remaining: 4999, resetSeconds: 12, source: 'X-RateLimit-*' },
    ],
  ];

  it.each(cases)('%s', async (_name, headers, expected) => {
    server.use(sequence('post', '/v1/partners/merchant', [created(headers)]).handler);
    const { rateLimit } = await makeClient().merchants.create({ name: 'Acme' }).withResponse();
    expect(rateLimit).toMatchObject(expected);
    expect(rateLimit?.resetAt).toBeInstanceOf(Date);
  });

  it('X-RateLimit-Reset as a Unix time (GitHub’s form) becomes seconds from now', async () => {
    const inTwoMinutes = Math.floor(Date.now() / 1000) + 120;
    server.use(
      sequence('post', '/v1/partners/merchant', [
        created({ 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(inTwoMinutes) }),
      ]).handler,
    );
    const { rateLimit } = await makeClient().merchants.create({ name: 'Acme' }).withResponse();
    expect(rateLimit?.resetSeconds).toBeGreaterThanOrEqual(119);
    expect(rateLimit?.resetSeconds).toBeLessThanOrEqual(121);
    expect(Math.abs((rateLimit?.resetAt?.getTime() ?? 0) - inTwoMinutes * 1000)).toBeLessThan(2_000);
  });

  it('the structured field wins over the separate ones when both are sent', () => {
    const headers = new Headers({ RateLimit: '"p";r=1;t=2', 'RateLimit-Remaining': '99', 'RateLimit-Limit': '100' });
    expect(parseRateLimit(headers, 0)).toMatchObject({ remaining: 1, resetSeconds: 2, source: 'RateLimit' });
  });

  it('undefined without rate-limit headers, or when they hold no number', () => {
    expect(parseRateLimit(new Headers())).toBeUndefined();
    expect(parseRateLimit(new Headers({ 'RateLimit-Limit': 'lots' }))).toBeUndefined();
    expect(parseRateLimit(new Headers({ RateLimit: '"p"' }))).toBeUndefined();
    // A structured field that says nothing falls back to the separate fields.
    expect(parseRateLimit(new Headers({ RateLimit: 'garbage', 'RateLimit-Remaining': '3' }))).toMatchObject({
      remaining: 3,
      limit: null,
      resetSeconds: null,
      resetAt: null,
      source: 'RateLimit-*',
    });
  });

  it('a tag-quota 429 from /v1/collect: the separate fields with a named RateLimit-Policy', async () => {
    // What the server sends when a tag's volume quota refuses a batch (packages/server/src/http/rate-limit.ts).
    server.use(
      http.post(`${BASE_URL}/v1/collect`, () =>
        reply(
          { message: 'Tag event quota exceeded', code: 'RATE_LIMITED' },
          {
            status: 429,
            headers: {
              'Retry-After': '30',
              'RateLimit-Limit': '1000',
              'RateLimit-Remaining': '0',
              'RateLimit-Reset': '30',
              'RateLimit-Policy': '"tag-events";q=1000;w=60',
            },
          },
        ),
      ),
    );
    const error = await makeClient({ maxRetries: 0 })
      .events.send({ tagId: 't', events: [{ event_name: 'x' }] })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).rateLimit).toMatchObject({
      limit: 1000,
      remaining: 0,
      resetSeconds: 30,
      windowSeconds: 60,
      policy: 'tag-events',
      source: 'RateLimit-*',
    });
  });

  it('a 429 error carries the same state: error.rateLimit, parseRateLimit(error.headers)', async () => {
    server.use(
      http.post(`${BASE_URL}/v1/partners/merchant`, () =>
        reply(
          { message: 'Too many requests', code: 'RATE_LIMITED' },
          {
            status: 429,
            headers: {
              'Retry-After': '7',
              'RateLimit-Limit': '600',
              'RateLimit-Remaining': '0',
              'RateLimit-Reset': '7',
            },
          },
        ),
      ),
    );
    const error = await makeClient({ maxRetries: 0 })
      .merchants.create({ name: 'Acme' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).rateLimit).toMatchObject({ limit: 600, remaining: 0, resetSeconds: 7 });
    expect(parseRateLimit((error as RateLimitError).headers)).toMatchObject({
      limit: 600,
      remaining: 0,
      resetSeconds: 7,
    });
  });
});
