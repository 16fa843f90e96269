import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { createMerchant, generateTag, uniqueDomain } from '../helpers/fixtures.js';

/**
 * Issue 30, findings 4 and 5: merchants, custom tags and webhook endpoints per partner were
 * unlimited, and so were test events, while every one of them feeds a background queue shared by
 * all partners. Each cap refuses over HTTP with its 4xx naming it (small caps set through env);
 * another partner is not affected; what exists stays reachable.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: {
      MAX_MERCHANTS_PER_PARTNER: '3',
      MAX_CUSTOM_TAGS_PER_PARTNER: '2',
      MAX_WEBHOOK_ENDPOINTS_PER_PARTNER: '2',
      WEBHOOK_TEST_CALLS_PER_PARTNER: '2',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    },
    knobs: { webhookTestWindowMs: 3_600_000 },
  });
});
afterAll(() => server?.close());

describe('per-partner caps', () => {
  it('MAX_MERCHANTS_PER_PARTNER: the next merchant is 409 LIMIT_EXCEEDED naming the cap; other partners unaffected', async () => {
    const partner = await server.createPartner();
    for (let i = 0; i < 3; i++) await createMerchant(server, partner.apiKey);
    const res = await api(server, partner.apiKey).post('/v1/partners/merchant', { name: 'One too many' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 'LIMIT_EXCEEDED', message: 'partner has reached MAX_MERCHANTS_PER_PARTNER (3)' });
    const other = await server.createPartner();
    expect((await api(server, other.apiKey).post('/v1/partners/merchant', { name: 'Fine' })).status).toBe(201);
  });

  it('concurrent creates never pass the cap', async () => {
    const partner = await server.createPartner();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => api(server, partner.apiKey).post('/v1/partners/merchant', { name: 'Race' })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(5);
  });

  it('MAX_CUSTOM_TAGS_PER_PARTNER: a new custom tag is refused, an existing one still returned, preverified ones free', async () => {
    const partner = await server.createPartner();
    const first = await generateTag(server, { key: partner.apiKey });
    await generateTag(server, { key: partner.apiKey });
    const merchantId = await createMerchant(server, partner.apiKey);
    const refused = await api(server, partner.apiKey).post('/v1/partners/tag/generate', {
      merchantId,
      domain: uniqueDomain(),
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      code: 'LIMIT_EXCEEDED',
      message: 'partner has reached MAX_CUSTOM_TAGS_PER_PARTNER (2)',
    });
    const again = await api(server, partner.apiKey).post('/v1/partners/tag/generate', {
      merchantId: first.merchantId,
      domain: first.domain,
    });
    expect(again.status).toBe(200);
    expect(again.body.tagId).toBe(first.tagId);
    const preverified = await api(server, partner.apiKey).post('/v1/partners/tag/generate', {
      merchantId,
      domain: `shop.${partner.domain}`,
    });
    expect(preverified.status).toBe(200);
  });

  it('MAX_WEBHOOK_ENDPOINTS_PER_PARTNER: live endpoints count; a deleted one frees its place', async () => {
    const partner = await server.createPartner();
    const client = api(server, partner.apiKey);
    const url = 'http://127.0.0.1:9/hook';
    const created = [];
    for (let i = 0; i < 2; i++) {
      const res = await client.post('/v1/partners/webhooks', { url });
      expect(res.status).toBe(201);
      created.push(res.body.webhookId as string);
    }
    const refused = await client.post('/v1/partners/webhooks', { url });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      code: 'LIMIT_EXCEEDED',
      message: 'partner has reached MAX_WEBHOOK_ENDPOINTS_PER_PARTNER (2)',
    });
    expect((await client.request('DELETE', `/v1/partners/webhooks/${created[0]}`)).status).toBe(204);
    expect((await client.post('/v1/partners/webhooks', { url })).status).toBe(201);
  });

  it('WEBHOOK_TEST_CALLS_PER_PARTNER: test events over the window are 429 RATE_LIMITED with Retry-After', async () => {
    const partner = await server.createPartner();
    const client = api(server, partner.apiKey);
    const endpoints: string[] = [];
    for (let i = 0; i < 2; i++) {
      endpoints.push((await client.post('/v1/partners/webhooks', { url: 'http://127.0.0.1:9/hook' })).body.webhookId);
    }
    // The budget is the partner's, whichever endpoint is tested.
    expect((await client.post(`/v1/partners/webhooks/${endpoints[0]}/test`)).status).toBe(202);
    expect((await client.post(`/v1/partners/webhooks/${endpoints[1]}/test`)).status).toBe(202);
    const refused = await client.post(`/v1/partners/webhooks/${endpoints[1]}/test`);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(refused.body.message).toMatch(/^partner has reached WEBHOOK_TEST_CALLS_PER_PARTNER \(2 per 3600 s\)/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Another partner's budget is its own.
    const other = await server.createPartner();
    const theirs = (await api(server, other.apiKey).post('/v1/partners/webhooks', { url: 'http://127.0.0.1:9/hook' }))
      .body.webhookId;
    expect((await api(server, other.apiKey).post(`/v1/partners/webhooks/${theirs}/test`)).status).toBe(202);
  });

  it('the tRPC transport refuses with the same code', async () => {
    const partner = await server.createPartner();
    for (let i = 0; i < 3; i++) await createMerchant(server, partner.apiKey);
    const error = await server
      .caller(partner.apiKey)
      .merchant.create({ name: 'x' })
      .catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('CONFLICT');
    expect((error as { message?: string }).message).toBe('partner has reached MAX_MERCHANTS_PER_PARTNER (3)');
  });
});
