import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchantListQuery, merchantListSql } from '../src/features/merchants/list-merchants.js';
import { startTestServer, type TestPartner, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import { createMerchant, generateTag, preverifiedTag, verifiedTag } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function list(partner: TestPartner, query = ''): Promise<{ status: number; body: Json }> {
  return api(server, partner.apiKey).get(`/v1/partners/merchant${query}`);
}

describe('POST /v1/partners/merchant', () => {
  it('answers 201 with exactly { merchantId } and stores the trimmed name', async () => {
    const partner = await server.createPartner();
    const before = Date.now();
    const res = await api(server, partner.apiKey).post('/v1/partners/merchant', { name: '  Acme Store \t' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['merchantId']);
    expect(res.body.merchantId).toMatch(UUID);

    const listed = await list(partner);
    expect(listed.body.merchants).toHaveLength(1);
    const [merchant] = listed.body.merchants;
    expect(Object.keys(merchant).sort()).toEqual([
      'createdAt',
      'livemode',
      'merchantId',
      'name',
      'retentionDays',
      'tags',
      'timezone',
    ]);
    expect(merchant).toMatchObject({ merchantId: res.body.merchantId, name: 'Acme Store', tags: [] });
    expect(merchant.createdAt).toMatch(ISO);
    expect(Date.parse(merchant.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(merchant.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('accepts a name of 1 and of 255 characters', async () => {
    const partner = await server.createPartner();
    const long = 'n'.repeat(255);
    for (const name of ['x', long]) {
      const res = await api(server, partner.apiKey).post('/v1/partners/merchant', { name });
      expect(res.status).toBe(201);
    }
    const names = (await list(partner)).body.merchants.map((m: Json) => m.name);
    expect(names).toEqual(['x', long]);
  });

  it.each([
    ['256 characters', { name: 'n'.repeat(256) }],
    ['whitespace only', { name: '   \t ' }],
    ['empty', { name: '' }],
    ['missing', {}],
    ['a number', { name: 42 }],
    ['null', { name: null }],
    ['an array', { name: ['Acme'] }],
    ['an object', { name: { first: 'Acme' } }],
  ])('rejects a name that is %s with 400 VALIDATION_ERROR and creates nothing', async (_, body) => {
    const partner = await server.createPartner();
    const res = await api(server, partner.apiKey).post('/v1/partners/merchant', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('name') });
    expect((await list(partner)).body.pagination.totalItems).toBe(0);
  });

  it('rejects a request without a body or with a non-object body with 400', async () => {
    const key = server.partner.apiKey;
    for (const body of [undefined, '[]', 'null', '"Acme"', '42']) {
      const res = await api(server, key).post('/v1/partners/merchant', body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('GET /v1/partners/merchant', () => {
  it('answers an empty list with zero totals for a partner without merchants', async () => {
    const partner = await server.createPartner();
    const res = await list(partner);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      merchants: [],
      pagination: {
        currentPage: 1,
        itemsPerPage: 10,
        totalItems: 0,
        total: 0,
        totalPages: 0,
        hasNextPage: false,
        hasPreviousPage: false,
      },
    });
  });

  it('pages 10 merchants by default, oldest first', async () => {
    const partner = await server.createPartner();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await createMerchant(server, partner.apiKey, `M${i}`));

    const first = await list(partner);
    expect(first.status).toBe(200);
    expect(first.body.merchants.map((m: Json) => m.merchantId)).toEqual(ids.slice(0, 10));
    expect(first.body.pagination).toEqual({
      currentPage: 1,
      itemsPerPage: 10,
      totalItems: 12,
      total: 12,
      totalPages: 2,
      hasNextPage: true,
      hasPreviousPage: false,
    });

    const second = await list(partner, '?page=2');
    expect(second.body.merchants.map((m: Json) => m.merchantId)).toEqual(ids.slice(10));
    expect(second.body.pagination).toMatchObject({
      currentPage: 2,
      itemsPerPage: 10,
      totalItems: 12,
      totalPages: 2,
      hasNextPage: false,
      hasPreviousPage: true,
    });
  });

  it('pages through every merchant exactly once in creation order', async () => {
    const partner = await server.createPartner();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await createMerchant(server, partner.apiKey, `P${i}`));

    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await list(partner, `?page=${page}&limit=3`);
      expect(res.status).toBe(200);
      expect(res.body.pagination).toMatchObject({
        currentPage: page,
        itemsPerPage: 3,
        totalItems: 7,
        totalPages: 3,
        hasNextPage: page < 3,
        hasPreviousPage: page > 1,
      });
      seen.push(...res.body.merchants.map((m: Json) => m.merchantId));
    }
    expect(seen).toEqual(ids);

    const beyond = await list(partner, '?page=4&limit=3');
    expect(beyond.status).toBe(200);
    expect(beyond.body.merchants).toEqual([]);
    expect(beyond.body.pagination).toMatchObject({ currentPage: 4, totalItems: 7, hasNextPage: false });
  });

  it('accepts the bounds page=1, limit=1 and limit=100', async () => {
    const partner = await server.createPartner();
    await createMerchant(server, partner.apiKey);
    await createMerchant(server, partner.apiKey);
    const one = await list(partner, '?page=1&limit=1');
    expect(one.status).toBe(200);
    expect(one.body.merchants).toHaveLength(1);
    expect(one.body.pagination).toMatchObject({ itemsPerPage: 1, totalPages: 2, hasNextPage: true });
    const hundred = await list(partner, '?limit=100');
    expect(hundred.status).toBe(200);
    expect(hundred.body.pagination.itemsPerPage).toBe(100);
  });

  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['page=abc', 'page'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
  ])('rejects %s with 400 VALIDATION_ERROR (no clamping)', async (query, param) => {
    const res = await list(server.partner, `?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(param) });
  });

  it('lists each tag with hostname, tagId, status, createdAt, isConnected and isVerified', async () => {
    const partner = await server.createPartner();
    const merchantId = await createMerchant(server, partner.apiKey, 'Tagged');
    const preverified = await generateTag(server, {
      key: partner.apiKey,
      merchantId,
      domain: `shop.${partner.domain}`,
    });
    const custom = await generateTag(server, { key: partner.apiKey, merchantId });

    const res = await list(partner);
    const [merchant] = res.body.merchants;
    expect(merchant.tags).toHaveLength(2);
    for (const tag of merchant.tags) {
      expect(Object.keys(tag).sort()).toEqual([
        'createdAt',
        'hostname',
        'isConnected',
        'isVerified',
        'livemode',
        'status',
        'tagId',
      ]);
      expect(tag.createdAt).toMatch(ISO);
    }
    expect(merchant.tags).toEqual([
      {
        hostname: `shop.${partner.domain}`,
        tagId: preverified.tagId,
        status: 'active',
        livemode: true,
        createdAt: expect.any(String),
        isConnected: false,
        isVerified: false,
      },
      {
        hostname: custom.domain,
        tagId: custom.tagId,
        status: 'inactive',
        livemode: true,
        createdAt: expect.any(String),
        isConnected: false,
        isVerified: false,
      },
    ]);
  });

  it('shows the verification result of a custom tag', async () => {
    const partner = await server.createPartner();
    const tag = await verifiedTag(server, partner);
    const res = await list(partner);
    expect(res.body.merchants[0].tags).toEqual([
      expect.objectContaining({ tagId: tag.tagId, status: 'waiting_for_events', isConnected: true, isVerified: true }),
    ]);
  });

  it("lists only the calling partner's merchants", async () => {
    const a = await server.createPartner();
    const b = await server.createPartner();
    const mine = await createMerchant(server, a.apiKey, 'Mine');
    await createMerchant(server, b.apiKey, 'Theirs');
    await preverifiedTag(server, b);
    const res = await list(a);
    expect(res.body.merchants.map((m: Json) => m.merchantId)).toEqual([mine]);
    expect(res.body.pagination.totalItems).toBe(1);
  });
});

describe('merchantListSql', () => {
  it('binds the same parameters, in the same order, as the statement it renders once', () => {
    const dialect = new PgDialect();
    const partnerId = '7b0f8f3e-2a4b-4c1d-9e8f-0a1b2c3d4e5f';
    for (const params of [
      { page: 1, limit: 10 },
      { page: 3, limit: 7 },
      { page: 1000, limit: 100 },
    ]) {
      const rendered = dialect.sqlToQuery(merchantListQuery(partnerId, params));
      expect(merchantListSql(partnerId, params)).toEqual({ sql: rendered.sql, params: rendered.params });
    }
  });
});
