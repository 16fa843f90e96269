import { normalizePagination } from '@partner/shared-schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// merchant.create and merchant.list through createCaller: the use cases behind POST and GET
// /v1/partners/merchant (test/merchants.test.ts holds the HTTP side).
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp({ env: { MAX_MERCHANTS_PER_PARTNER: '5' } });
});
afterAll(() => app?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function partnerWith(count: number) {
  const partner = await app.createPartner();
  const caller = app.caller(partner.apiKey);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await caller.merchant.create({ name: `M${i}` })).merchantId);
    // Creation order is the stored millisecond, ties by id: in-process creates can share one.
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return { partner, caller, ids };
}

describe('merchant.create', () => {
  it('answers exactly { merchantId } and stores the trimmed name', async () => {
    const { caller } = await partnerWith(0);
    const created = await caller.merchant.create({ name: '  Acme Store \t' });
    expect(Object.keys(created)).toEqual(['merchantId']);
    expect(created.merchantId).toMatch(UUID);
    const { merchants } = await caller.merchant.list({});
    expect(merchants).toEqual([
      {
        merchantId: created.merchantId,
        name: 'Acme Store',
        livemode: true,
        createdAt: expect.any(String),
        retentionDays: null,
        timezone: 'UTC',
        tags: [],
      },
    ]);
    expect(Math.abs(Date.parse(merchants[0]!.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  it('stores a time zone under its canonical name; PATCH changes it; GET answers it', async () => {
    const { caller } = await partnerWith(0);
    const { merchantId } = await caller.merchant.create({ name: 'Zoned', timezone: 'europe/paris' });
    expect((await caller.merchant.get({ merchantId })).timezone).toBe('Europe/Paris');
    expect((await caller.merchant.update({ merchantId, timezone: 'US/Eastern' })).timezone).toBe('America/New_York');
    expect((await caller.merchant.list({})).merchants[0]!.timezone).toBe('America/New_York');
    const bad = await failureOf(caller.merchant.update({ merchantId, timezone: 'Mars/Olympus' }));
    expect(bad).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(bad.message).toContain('timezone');
    const badCreate = await failureOf(caller.merchant.create({ name: 'X', timezone: 'Nowhere' }));
    expect(badCreate).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it.each([
    ['256 characters', { name: 'n'.repeat(256) }],
    ['whitespace only', { name: '  \t ' }],
    ['missing', {}],
    ['a number', { name: 42 }],
  ])('refuses a name that is %s: 400 VALIDATION_ERROR naming the field, nothing stored', async (_, input) => {
    const { caller } = await partnerWith(0);
    const failure = await failureOf(caller.merchant.create(input as { name: string }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', trpcCode: 'BAD_REQUEST' });
    expect(failure.message).toContain('name');
    expect((await caller.merchant.list({})).pagination.totalItems).toBe(0);
  });

  it('answers 401 UNAUTHORIZED without a key and with an unknown key', async () => {
    for (const key of [undefined, 'pk_test_not_a_key']) {
      const failure = await failureOf(app.caller(key).merchant.create({ name: 'Nobody' }));
      expect(failure).toMatchObject({ status: 401, code: 'UNAUTHORIZED', trpcCode: 'UNAUTHORIZED' });
    }
  });
});

describe('merchant.create: MAX_MERCHANTS_PER_PARTNER', () => {
  it('refuses the merchant past the cap with 409 LIMIT_EXCEEDED and stores nothing more', async () => {
    const { caller, ids } = await partnerWith(5);
    const failure = await failureOf(caller.merchant.create({ name: 'One too many' }));
    expect(failure).toMatchObject({ status: 409, code: 'LIMIT_EXCEEDED' });
    expect(failure.message).toContain('MAX_MERCHANTS_PER_PARTNER (5)');
    const listed = await caller.merchant.list({ limit: 100 });
    expect(listed.merchants.map((m) => m.merchantId)).toEqual(ids);
  });

  it('counts per partner: a full partner leaves another free', async () => {
    await partnerWith(5);
    const { caller } = await partnerWith(0);
    await expect(caller.merchant.create({ name: 'Free' })).resolves.toEqual({
      merchantId: expect.stringMatching(UUID),
    });
  });

  it('lets concurrent creates past the cap fail, never store more than the cap', async () => {
    const { caller } = await partnerWith(3);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => caller.merchant.create({ name: `C${i}` })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect((await caller.merchant.list({ limit: 100 })).pagination.totalItems).toBe(5);
  });
});

describe('merchant.list: pagination', () => {
  it('answers an empty first page with zero totals', async () => {
    const { caller } = await partnerWith(0);
    expect(await caller.merchant.list({})).toEqual({
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

  it('walks every merchant once in creation order, both envelopes agreeing on each page', async () => {
    const { caller, ids } = await partnerWith(5);
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const { merchants, pagination } = await caller.merchant.list({ page, limit: 2 });
      expect(pagination).toEqual({
        currentPage: page,
        itemsPerPage: 2,
        totalItems: 5,
        total: 5,
        totalPages: 3,
        hasNextPage: page < 3,
        hasPreviousPage: page > 1,
      });
      // The alternative envelope's fields alone ({ page, limit, total, totalPages }) say the same.
      const alt = { page, limit: 2, total: pagination.total, totalPages: pagination.totalPages };
      const request = { page, limit: 2, itemCount: merchants.length };
      expect(normalizePagination(alt, request)).toEqual(normalizePagination(pagination, request));
      seen.push(...merchants.map((m) => m.merchantId));
    }
    expect(seen).toEqual(ids);
    const beyond = await caller.merchant.list({ page: 4, limit: 2 });
    expect(beyond.merchants).toEqual([]);
    expect(beyond.pagination).toMatchObject({
      currentPage: 4,
      totalItems: 5,
      hasNextPage: false,
      hasPreviousPage: true,
    });
  });

  it.each([
    [{ page: 0 }, 'page'],
    [{ page: 1.5 }, 'page'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 101 }, 'limit'],
  ])('refuses %o with 400 VALIDATION_ERROR naming %s (no clamping)', async (input, field) => {
    const failure = await failureOf(app.caller((await app.createPartner()).apiKey).merchant.list(input));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(failure.message).toContain(field);
  });
});

describe('merchant.list: isolation', () => {
  it("lists only the calling partner's merchants and counts only them", async () => {
    const a = await partnerWith(2);
    const b = await partnerWith(3);
    const listedA = await a.caller.merchant.list({});
    expect(listedA.merchants.map((m) => m.merchantId)).toEqual(a.ids);
    expect(listedA.pagination.totalItems).toBe(2);
    expect((await b.caller.merchant.list({})).merchants.map((m) => m.merchantId)).toEqual(b.ids);
  });
});
