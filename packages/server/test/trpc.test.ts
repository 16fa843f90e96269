import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from '@trpc/client';
import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorResponse, toAppError } from '../src/kernel/errors.js';
import type { AppRouter } from '../src/routes/_app.js';
import { startTestServer, type TestPartner, type TestServer } from '../src/testing/index.js';
import { api, leaksInternals } from './helpers/api.js';
import { createMerchant, generateTag, MISSING_ID, publishCname, uniqueDomain } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** The public error of a createCaller failure: tRPC code, HTTP status and our `code`. */
async function callerFailure(call: Promise<unknown>): Promise<{ trpcCode: string; status: number; code: string }> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCError);
  const trpcError = error as TRPCError;
  return {
    trpcCode: trpcError.code,
    status: getHTTPStatusCodeFromError(trpcError),
    code: errorResponse(toAppError(trpcError)).body.code,
  };
}

function httpClient(key: string | undefined, link: 'single' | 'batch' = 'single', onFetch?: () => void) {
  const options = {
    url: `${server.url}/trpc`,
    headers: key ? { authorization: `Bearer ${key}` } : {},
    fetch: (...args: Parameters<typeof fetch>) => {
      onFetch?.();
      return fetch(...args);
    },
  };
  return createTRPCClient<AppRouter>({ links: [link === 'batch' ? httpBatchLink(options) : httpLink(options)] });
}

async function clientFailure(call: Promise<unknown>): Promise<TRPCClientError<AppRouter>> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  return error as TRPCClientError<AppRouter>;
}

describe('through createCaller', () => {
  it('creates, lists and tags merchants', async () => {
    const partner = await server.createPartner();
    const caller = server.caller(partner.apiKey);
    const { merchantId } = await caller.merchant.create({ name: '  Caller Co  ' });
    const generated = await caller.tag.generate({ merchantId, domain: partner.domain.toUpperCase() });
    expect(generated).toEqual({
      tagId: expect.any(String),
      domain: partner.domain,
      record: { type: 'CNAME', name: expect.stringMatching(/^edge-/), value: server.dns.targetHost, ttl: 300 },
      status: 'active',
      livemode: true,
      message: 'New tag created successfully',
      consentMode: 'none',
      respectGpc: true,
      cookieless: false,
    });
    const list = await caller.merchant.list({});
    expect(list.merchants).toEqual([
      {
        merchantId,
        name: 'Caller Co',
        livemode: true,
        retentionDays: null,
        timezone: 'UTC',
        createdAt: expect.any(String),
        tags: [expect.objectContaining({ tagId: generated.tagId, hostname: partner.domain, status: 'active' })],
      },
    ]);
    expect(list.pagination).toMatchObject({ currentPage: 1, itemsPerPage: 10, totalItems: 1 });
  });

  it('verifies a tag and reads its collected events', async () => {
    const caller = server.caller(server.partner.apiKey);
    const tag = await generateTag(server);
    publishCname(server, tag);
    expect(await caller.tag.verify({ tagId: tag.tagId, subdomain: tag.domain })).toEqual({ verified: true });
    expect(
      await server.caller().collect.ingest({ tagId: tag.tagId, events: [{ id: 'c1', event_name: 'PageView' }] }),
    ).toEqual({ accepted: 1 });
    const events = await caller.events.list({ merchantId: tag.merchantId });
    expect(events.events.map((e) => e.id)).toEqual(['c1']);
    expect(events.pagination).toMatchObject({ itemsPerPage: 12, totalItems: 1, total: 1 });
  });

  it.each([
    [
      'an unknown merchant',
      () => server.caller(server.partner.apiKey).tag.generate({ merchantId: MISSING_ID, domain: 'example.com' }),
      { trpcCode: 'NOT_FOUND', status: 404, code: 'MERCHANT_NOT_FOUND' },
    ],
    [
      'a missing key',
      () => server.caller().merchant.list({}),
      { trpcCode: 'UNAUTHORIZED', status: 401, code: 'UNAUTHORIZED' },
    ],
    [
      'an invalid name',
      () => server.caller(server.partner.apiKey).merchant.create({ name: ' ' }),
      { trpcCode: 'BAD_REQUEST', status: 400, code: 'VALIDATION_ERROR' },
    ],
    [
      'a limit over 100',
      () => server.caller(server.partner.apiKey).merchant.list({ limit: 101 }),
      { trpcCode: 'BAD_REQUEST', status: 400, code: 'VALIDATION_ERROR' },
    ],
    [
      'a sub-domain for generate',
      async () =>
        server
          .caller(server.partner.apiKey)
          .tag.generate({ merchantId: await createMerchant(server), domain: `a.${uniqueDomain()}` }),
      { trpcCode: 'BAD_REQUEST', status: 400, code: 'VALIDATION_ERROR' },
    ],
    [
      'an unknown tag',
      () => server.caller(server.partner.apiKey).tag.verify({ tagId: MISSING_ID, subdomain: 'example.com' }),
      { trpcCode: 'NOT_FOUND', status: 404, code: 'TAG_NOT_FOUND' },
    ],
    [
      'a missing CNAME',
      async () => {
        const tag = await generateTag(server);
        return server.caller(server.partner.apiKey).tag.verify({ tagId: tag.tagId, subdomain: tag.domain });
      },
      { trpcCode: 'UNPROCESSABLE_CONTENT', status: 422, code: 'VALIDATION_ERROR' },
    ],
    [
      'a SERVFAIL',
      async () => {
        const tag = await generateTag(server);
        server.dns.set(`${tag.record.name}.${tag.domain}`, { kind: 'servfail' });
        return server.caller(server.partner.apiKey).tag.verify({ tagId: tag.tagId, subdomain: tag.domain });
      },
      { trpcCode: 'SERVICE_UNAVAILABLE', status: 503, code: 'EXTERNAL_SERVICE_ERROR' },
    ],
    [
      "another partner's tag",
      async () => {
        const other = await server.createPartner();
        const tag = await generateTag(server, { key: other.apiKey });
        return server.caller(server.partner.apiKey).tag.verify({ tagId: tag.tagId, subdomain: tag.domain });
      },
      { trpcCode: 'FORBIDDEN', status: 403, code: 'ACCESS_DENIED' },
    ],
    [
      'a merchant without a tag',
      async () => server.caller(server.partner.apiKey).events.list({ merchantId: await createMerchant(server) }),
      { trpcCode: 'NOT_FOUND', status: 404, code: 'MERCHANT_NOT_FOUND' },
    ],
    [
      'an unverified tag',
      async () => {
        const tag = await generateTag(server);
        return server.caller().collect.ingest({ tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
      },
      { trpcCode: 'CONFLICT', status: 409, code: 'TAG_NOT_LIVE' },
    ],
  ])('fails for %s with the REST status and code', async (_, call, expected) => {
    expect(await callerFailure(call())).toEqual(expected);
  });
});

describe('through @trpc/client over HTTP', () => {
  let partner: TestPartner;
  beforeAll(async () => {
    partner = await server.createPartner();
  });

  it('runs queries and mutations, sharing state with REST', async () => {
    const client = httpClient(partner.apiKey);
    const { merchantId } = await client.merchant.create.mutate({ name: 'Client Co' });
    const rest = await api(server, partner.apiKey).get('/v1/partners/merchant');
    expect(rest.body.merchants.map((m: { merchantId: string }) => m.merchantId)).toContain(merchantId);

    const tag = await client.tag.generate.mutate({ merchantId, domain: uniqueDomain() });
    expect(tag.status).toBe('inactive');
    const again = await client.tag.generate.mutate({ merchantId, domain: 'other-domain.com' });
    expect(again).toEqual({ ...tag, message: 'Existing tag retrieved' });

    const list = await client.merchant.list.query({ page: 1, limit: 5 });
    expect(list.pagination).toMatchObject({ currentPage: 1, itemsPerPage: 5 });
    expect(list.merchants.find((m) => m.merchantId === merchantId)?.tags[0]?.tagId).toBe(tag.tagId);
  });

  it('verifies a tag and reads events through the client', async () => {
    const client = httpClient(partner.apiKey);
    const tag = await generateTag(server, { key: partner.apiKey });
    publishCname(server, tag);
    expect(await client.tag.verify.mutate({ tagId: tag.tagId, subdomain: tag.domain })).toEqual({ verified: true });
    await httpClient(undefined).collect.ingest.mutate({
      tagId: tag.tagId,
      events: [{ id: 'h1', event_name: 'Purchase', data: { value: 1 } }],
    });
    const events = await client.events.list.query({ merchantId: tag.merchantId, events: 'Purchase' });
    expect(events.events).toEqual([
      {
        id: 'h1',
        muid: expect.any(String),
        event_name: 'Purchase',
        event_time: expect.any(String),
        raw_data: '{"value":1}',
        consent: 'not_required',
      },
    ]);
  });

  type Client = ReturnType<typeof httpClient>;
  it.each<[string, number, (c: Client) => Promise<unknown>]>([
    ['MERCHANT_NOT_FOUND', 404, (c) => c.tag.generate.mutate({ merchantId: MISSING_ID, domain: 'example.com' })],
    ['VALIDATION_ERROR', 400, (c) => c.merchant.create.mutate({ name: '' })],
    ['VALIDATION_ERROR', 400, (c) => c.merchant.list.query({ page: 0 })],
    [
      'VALIDATION_ERROR',
      400,
      (c) => c.events.list.query({ merchantId: MISSING_ID, startDate: '2026-02-01', endDate: '2026-01-01' }),
    ],
    ['TAG_NOT_FOUND', 404, (c) => c.tag.verify.mutate({ tagId: MISSING_ID, subdomain: 'example.com' })],
    ['MERCHANT_NOT_FOUND', 404, (c) => c.events.list.query({ merchantId: MISSING_ID })],
  ])('reports %s in error.data with httpStatus %i', async (code, status, call) => {
    const error = await clientFailure(call(httpClient(partner.apiKey)));
    expect(error.data).toMatchObject({ code, httpStatus: status, requestId: expect.stringMatching(/^req_/) });
    expect(error.data).not.toHaveProperty('stack');
    expect(leaksInternals(error.message)).toBe(false);
    expect(error.shape?.data.code).toBe(code);
  });

  it('reports UNAUTHORIZED with the bearer message when no key is sent', async () => {
    const error = await clientFailure(httpClient(undefined).merchant.list.query({}));
    expect(error.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(error.message).toBe('Bearer token is required');
  });

  it('reports the same code in the tRPC envelope as in the REST body', async () => {
    const post = await api(server, partner.apiKey).post('/trpc/tag.verify', { tagId: MISSING_ID, subdomain: 'x.com' });
    const rest = await api(server, partner.apiKey).post('/v1/partners/tag/verify', {
      tagId: MISSING_ID,
      subdomain: 'x.com',
    });
    expect(post.status).toBe(rest.status);
    expect(post.body.error.data.code).toBe(rest.body.code);
    expect(post.body.error.message).toBe(rest.body.message);
    expect(post.text).not.toMatch(/"stack"/);
  });

  it('answers a tRPC body over 1 MB with PAYLOAD_TOO_LARGE (413)', async () => {
    const error = await clientFailure(
      httpClient(partner.apiKey).merchant.create.mutate({ name: 'x'.repeat(1_100_000) }),
    );
    expect(error.data).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', httpStatus: 413 });
  });

  it('answers input nested thousands of levels deep with VALIDATION_ERROR (400), not a crash', async () => {
    const tag = await generateTag(server, { key: partner.apiKey, domain: partner.domain });
    const deep = `{"tagId":"${tag.tagId}","events":[{"event_name":"X","data":${'['.repeat(5000)}${']'.repeat(5000)}}]}`;
    const res = await api(server).post('/trpc/collect.ingest', deep);
    expect(res.status).toBe(400);
    expect(res.body.error.data).toMatchObject({ code: 'VALIDATION_ERROR', httpStatus: 400 });
  });

  it('answers an unknown procedure with NOT_FOUND', async () => {
    const res = await api(server, partner.apiKey).get('/trpc/merchant.delete');
    expect(res.status).toBe(404);
    expect(res.body.error.data).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
  });

  it('batches calls into one request with httpBatchLink, each with its own result or error', async () => {
    let requests = 0;
    const client = httpClient(partner.apiKey, 'batch', () => {
      requests++;
    });
    const merchantId = await createMerchant(server, partner.apiKey, 'Batch Co');
    requests = 0;
    const [list, generated, missing, invalid] = await Promise.allSettled([
      client.merchant.list.query({ limit: 1 }),
      client.tag.generate.mutate({ merchantId, domain: partner.domain }),
      client.tag.generate.mutate({ merchantId: MISSING_ID, domain: partner.domain }),
      client.merchant.list.query({ limit: 0 }),
    ]);
    // Queries and mutations go in separate batches (GET and POST).
    expect(requests).toBe(2);
    expect(list.status).toBe('fulfilled');
    expect(list.status === 'fulfilled' && list.value.pagination.itemsPerPage).toBe(1);
    expect(generated.status === 'fulfilled' && generated.value.status).toBe('active');
    expect(missing.status).toBe('rejected');
    expect(missing.status === 'rejected' && (missing.reason as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'MERCHANT_NOT_FOUND',
      httpStatus: 404,
    });
    expect(invalid.status === 'rejected' && (invalid.reason as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'VALIDATION_ERROR',
      httpStatus: 400,
    });
  });

  it('authenticates a batch once for all its calls', async () => {
    const client = httpClient(undefined, 'batch');
    const results = await Promise.allSettled([client.merchant.list.query({}), client.merchant.list.query({ page: 2 })]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect(result.status === 'rejected' && (result.reason as TRPCClientError<AppRouter>).data?.code).toBe(
        'UNAUTHORIZED',
      );
    }
  });
});
