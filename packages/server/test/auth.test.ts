import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, partners } from '../src/db/schema/index.js';
import { errorResponse, toAppError } from '../src/kernel/errors.js';
import type { AppRouter } from '../src/routes/_app.js';
import { startTestServer, type TestPartner, type TestServer } from '../src/testing/index.js';
import { type ApiResponse, api, type HeaderMap } from './helpers/api.js';
import { MISSING_ID } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const BEARER_MISSING = { statusCode: 401, message: 'Bearer token is required', error: 'Unauthorized' };
const UNAUTHORIZED = { message: expect.any(String), code: 'UNAUTHORIZED' };

/** Every partner route with a request that would succeed or fail past auth, never on auth itself. */
const ROUTES: Array<{ name: string; send(headers: HeaderMap): Promise<ApiResponse>; ok: number }> = [
  {
    name: 'GET /v1/partners/merchant',
    send: (headers) => api(server).get('/v1/partners/merchant', headers),
    ok: 200,
  },
  {
    name: 'POST /v1/partners/merchant',
    send: (headers) => api(server).post('/v1/partners/merchant', { name: 'Auth Co' }, headers),
    ok: 201,
  },
  {
    name: 'POST /v1/partners/tag/generate',
    send: (headers) =>
      api(server).post('/v1/partners/tag/generate', { merchantId: MISSING_ID, domain: 'example.com' }, headers),
    ok: 404,
  },
  {
    name: 'POST /v1/partners/tag/verify',
    send: (headers) =>
      api(server).post('/v1/partners/tag/verify', { tagId: MISSING_ID, subdomain: 'example.com' }, headers),
    ok: 404,
  },
  {
    name: 'GET /v1/partners/tag/{tagId}',
    send: (headers) => api(server).get(`/v1/partners/tag/${MISSING_ID}`, headers),
    ok: 404,
  },
  {
    name: 'GET /v1/partners/events',
    send: (headers) => api(server).get(`/v1/partners/events?merchantId=${MISSING_ID}`, headers),
    ok: 404,
  },
];

const UNKNOWN_KEY = `mp_live_${'A'.repeat(32)}`;

const BAD_HEADERS: Array<[string, () => string]> = [
  ['an empty Bearer token', () => 'Bearer '],
  ['the bare word Bearer', () => 'Bearer'],
  ['a Basic scheme', () => 'Basic xxx'],
  ['a Basic scheme carrying a real key', () => `Basic ${server.partner.apiKey}`],
  ['a key without a scheme', () => server.partner.apiKey],
  ['a malformed token', () => 'Bearer not-a-key'],
  ['a truncated key', () => `Bearer ${server.partner.apiKey.slice(0, -1)}`],
  ['a key with an extra character', () => `Bearer ${server.partner.apiKey}x`],
  ['an unknown well-formed mp_live_ key', () => `Bearer ${UNKNOWN_KEY}`],
  ['an unknown mp_test_ key', () => `Bearer mp_test_${'B'.repeat(32)}`],
  ['two tokens', () => `Bearer ${server.partner.apiKey} ${server.partner.apiKey}`],
];

describe.each(ROUTES)('$name', (route) => {
  it('answers 401 with the bearer-missing body when there is no Authorization header', async () => {
    const res = await route.send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_MISSING);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers 401 with the bearer-missing body for an empty Authorization header', async () => {
    const res = await route.send({ authorization: '' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_MISSING);
  });

  it.each(BAD_HEADERS)('answers 401 UNAUTHORIZED for %s', async (_, header) => {
    const res = await route.send({ authorization: header() });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  it('accepts a valid key, with the scheme in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await route.send({ authorization: `${scheme} ${server.partner.apiKey}` });
      expect(res.status).toBe(route.ok);
    }
  });
});

describe('auth before validation', () => {
  it.each([
    ['POST /v1/partners/merchant with an invalid body', () => api(server).post('/v1/partners/merchant', { name: '' })],
    ['POST /v1/partners/merchant with malformed JSON', () => api(server).post('/v1/partners/merchant', '{oops')],
    [
      'POST /v1/partners/tag/generate with a bad body',
      () => api(server).post('/v1/partners/tag/generate', { merchantId: 'x' }),
    ],
    ['POST /v1/partners/tag/verify with no body', () => api(server).post('/v1/partners/tag/verify')],
    [
      'POST /v1/partners/merchant as multipart',
      () => api(server).request('POST', '/v1/partners/merchant', { body: new FormData() }),
    ],
    ['GET /v1/partners/merchant with page=0', () => api(server).get('/v1/partners/merchant?page=0')],
    ['GET /v1/partners/events without merchantId', () => api(server).get('/v1/partners/events')],
  ])('answers 401 (not 400/415) for %s without a token', async (_, send) => {
    const res = await send();
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_MISSING);
  });

  it('answers 401 UNAUTHORIZED (not 400) for an invalid body with an unknown key', async () => {
    const res = await api(server, UNKNOWN_KEY).post('/v1/partners/merchant', { name: '' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });
});

describe('key lifecycle', () => {
  async function status(key: string): Promise<number> {
    return (await api(server, key).get('/v1/partners/merchant')).status;
  }

  it('rejects every route with a revoked key', async () => {
    const partner = await server.createPartner();
    expect(await status(partner.apiKey)).toBe(200);
    expect(await server.revokeKeys(partner.partnerId)).toBe(1);
    for (const route of ROUTES) {
      const res = await route.send({ authorization: `Bearer ${partner.apiKey}` });
      expect(res.status, route.name).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
  });

  it('rejects an expired key: rotation with no overlap cuts the old key at once', async () => {
    const partner = await server.createPartner();
    const { apiKey } = await server.rotateKey(partner.partnerId, 0);
    for (const route of ROUTES) {
      const res = await route.send({ authorization: `Bearer ${partner.apiKey}` });
      expect(res.status, route.name).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
    expect(await status(apiKey)).toBe(200);
  });

  it('keeps old and new keys working after a rotation with the default overlap, for the same partner', async () => {
    const partner = await server.createPartner();
    const { apiKey, oldKeysExpireAt } = await server.rotateKey(partner.partnerId);
    expect(apiKey).not.toBe(partner.apiKey);
    expect(apiKey.startsWith('mp_live_')).toBe(true);
    expect(Date.parse(oldKeysExpireAt)).toBeGreaterThan(Date.now() + 60 * 60 * 1000);
    const created = await api(server, partner.apiKey).post('/v1/partners/merchant', { name: 'Old key' });
    expect(created.status).toBe(201);
    const listed = await api(server, apiKey).get('/v1/partners/merchant');
    expect(listed.status).toBe(200);
    expect(listed.body.merchants.map((m: { merchantId: string }) => m.merchantId)).toEqual([created.body.merchantId]);
  });

  it("does not touch other partners' keys", async () => {
    const a = await server.createPartner();
    const b = await server.createPartner();
    await server.revokeKeys(a.partnerId);
    expect(await status(a.apiKey)).toBe(401);
    expect(await status(b.apiKey)).toBe(200);
  });
});

describe('key storage', () => {
  it('stores keys only as hashes', async () => {
    const partner = await server.createPartner();
    const rotated = await server.rotateKey(partner.partnerId);
    const db = server.app.deps.db;
    const keyRows = await db.select().from(apiKeys).where(eq(apiKeys.partnerId, partner.partnerId));
    const partnerRows = await db.select().from(partners).where(eq(partners.id, partner.partnerId));
    expect(keyRows).toHaveLength(2);
    const stored = JSON.stringify([keyRows, partnerRows]);
    for (const key of [partner.apiKey, rotated.apiKey]) {
      expect(key).toMatch(/^mp_live_[A-Za-z0-9_-]{32}$/);
      expect(stored).not.toContain(key);
      // Not even the secret part after the prefix.
      expect(stored).not.toContain(key.slice('mp_live_'.length));
    }
    for (const row of keyRows) {
      expect(row.keyHash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.keyPrefix.length).toBeLessThanOrEqual(12);
    }
  });
});

describe('tRPC partner procedures', () => {
  const calls: Array<[string, (caller: ReturnType<TestServer['caller']>) => Promise<unknown>]> = [
    ['merchant.list', (c) => c.merchant.list({})],
    ['merchant.create', (c) => c.merchant.create({ name: 'Auth Co' })],
    ['tag.generate', (c) => c.tag.generate({ merchantId: MISSING_ID, domain: 'example.com' })],
    ['tag.verify', (c) => c.tag.verify({ tagId: MISSING_ID, subdomain: 'example.com' })],
    ['events.list', (c) => c.events.list({ merchantId: MISSING_ID })],
  ];

  async function callerError(call: () => Promise<unknown>): Promise<TRPCError> {
    const error = await call().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TRPCError);
    return error as TRPCError;
  }

  it.each(calls)('%s through createCaller: 401 UNAUTHORIZED without a key and with an unknown one', async (_, call) => {
    for (const key of [undefined, UNKNOWN_KEY, 'garbage']) {
      const error = await callerError(() => call(server.caller(key)));
      expect(error.code).toBe('UNAUTHORIZED');
      expect(getHTTPStatusCodeFromError(error)).toBe(401);
      expect(errorResponse(toAppError(error)).body.code).toBe('UNAUTHORIZED');
    }
  });

  it.each(calls)('%s through createCaller: checks auth before input', async (name) => {
    const caller = server.caller(undefined) as unknown as Record<string, Record<string, (input: unknown) => unknown>>;
    const [router, procedure] = name.split('.') as [string, string];
    const error = await callerError(async () => caller[router]![procedure]!({ bogus: true }));
    expect(error.code).toBe('UNAUTHORIZED');
  });

  function client(partner?: TestPartner | string) {
    const key = typeof partner === 'string' ? partner : partner?.apiKey;
    return createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${server.url}/trpc`, headers: key ? { authorization: `Bearer ${key}` } : {} })],
    });
  }

  const httpCalls: Array<[string, (c: ReturnType<typeof client>) => Promise<unknown>]> = [
    ['merchant.list', (c) => c.merchant.list.query({})],
    ['merchant.create', (c) => c.merchant.create.mutate({ name: 'Auth Co' })],
    ['tag.generate', (c) => c.tag.generate.mutate({ merchantId: MISSING_ID, domain: 'example.com' })],
    ['tag.verify', (c) => c.tag.verify.mutate({ tagId: MISSING_ID, subdomain: 'example.com' })],
    ['events.list', (c) => c.events.list.query({ merchantId: MISSING_ID })],
  ];

  it.each(httpCalls)(
    '%s over HTTP: 401 UNAUTHORIZED without a key, with an unknown one and a revoked one',
    async (_, call) => {
      const revoked = await server.createPartner();
      await server.revokeKeys(revoked.partnerId);
      for (const key of [undefined, UNKNOWN_KEY, revoked.apiKey]) {
        const error = await call(client(key)).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(TRPCClientError);
        const data = (error as TRPCClientError<AppRouter>).data;
        expect(data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
      }
    },
  );

  it('collect.ingest is public over tRPC too', async () => {
    const error = await client()
      .collect.ingest.mutate({ tagId: MISSING_ID, events: [{ event_name: 'PageView' }] })
      .then(
        () => null,
        (e: unknown) => e as TRPCClientError<AppRouter>,
      );
    // Past auth: the tag does not exist.
    expect(error?.data).toMatchObject({ code: 'TAG_NOT_FOUND', httpStatus: 404 });
  });
});
