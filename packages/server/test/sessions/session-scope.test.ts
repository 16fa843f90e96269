import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { createMerchant, preverifiedTag } from '../helpers/fixtures.js';
import { createSession, summaryPath, until } from './session-helpers.js';

// Merchant sessions through REST over HTTP (PGlite, or PostgreSQL with TEST_DATABASE_URL): what a
// token may read, what it may not, and when it stops working.
let server: TestServer;
let doc: Json;
beforeAll(async () => {
  server = await startTestServer();
  doc = (await api(server).get('/openapi.json')).body;
});
afterAll(() => server?.close());

/** Every operation of the document, with its security schemes. */
function operations(): Array<{ method: string; path: string; schemes: string[] }> {
  const out: Array<{ method: string; path: string; schemes: string[] }> = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const schemes = ((op.security ?? []) as Array<Record<string, unknown>>).flatMap((entry) => Object.keys(entry));
      out.push({ method: method.toUpperCase(), path, schemes });
    }
  }
  return out;
}

describe('merchant sessions: scope', () => {
  it('reads its merchant’s statistics and tag status', async () => {
    const tag = await preverifiedTag(server);
    const session = await createSession(server, server.partner.apiKey, tag.merchantId);
    const client = api(server, session.token);
    const summary = await client.get(summaryPath(tag.merchantId));
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual((await api(server, server.partner.apiKey).get(summaryPath(tag.merchantId))).body);
    const today = new Date().toISOString().slice(0, 10);
    const query = `merchantId=${tag.merchantId}&startDate=${today}&endDate=${today}&timezone=UTC`;
    expect((await client.get(`/v1/partners/stats/timeseries?${query}`)).status).toBe(200);
    expect((await client.get(`/v1/partners/stats/breakdown?${query}&dimension=path`)).status).toBe(200);
    const got = await client.get(`/v1/partners/tag/${tag.tagId}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ tagId: tag.tagId, merchantId: tag.merchantId, status: 'active' });
  });

  it('answers 403 SESSION_SCOPE on every other operation of the OpenAPI document', async () => {
    const merchantId = await createMerchant(server);
    const { token } = await createSession(server, server.partner.apiKey, merchantId);
    const others = operations().filter(
      ({ schemes }) => schemes.includes('Authorization') && !schemes.includes('MerchantSession'),
    );
    // The document lists the partner operations; a new one is covered here without a line more.
    expect(others.length).toBeGreaterThanOrEqual(12);
    for (const { method, path } of others) {
      const url = path.replace(/\{merchantId\}/g, merchantId).replace(/\{[^}]+\}/g, randomUUID());
      const res = await api(server, token).request(method, url, {
        headers: { 'content-type': 'application/json' },
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
      });
      expect({ op: `${method} ${path}`, status: res.status, code: res.body?.code }).toEqual({
        op: `${method} ${path}`,
        status: 403,
        code: 'SESSION_SCOPE',
      });
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message']);
    }
  });

  it('documents the session scheme on exactly the operations it may call', () => {
    const readable = operations()
      .filter(({ schemes }) => schemes.includes('MerchantSession'))
      .map(({ method, path }) => `${method} ${path}`)
      .sort();
    expect(readable).toEqual([
      'GET /v1/partners/merchant/{merchantId}/goals',
      'GET /v1/partners/stats/attribution',
      'GET /v1/partners/stats/breakdown',
      'GET /v1/partners/stats/funnel',
      'GET /v1/partners/stats/realtime',
      'GET /v1/partners/stats/summary',
      'GET /v1/partners/stats/timeseries',
      'GET /v1/partners/tag/{tagId}',
    ]);
  });

  it('answers 403 SESSION_SCOPE for another merchant of the same partner, and for its tag', async () => {
    const own = await createMerchant(server);
    const other = await preverifiedTag(server);
    const { token } = await createSession(server, server.partner.apiKey, own);
    const client = api(server, token);
    for (const res of [
      await client.get(summaryPath(other.merchantId)),
      await client.get(`/v1/partners/tag/${other.tagId}`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('SESSION_SCOPE');
    }
  });

  it('is created only for the partner’s own merchant (404 otherwise) and by an API key', async () => {
    const stranger = await server.createPartner();
    const theirs = await createMerchant(server, stranger.apiKey);
    const res = await api(server, server.partner.apiKey).post(`/v1/partners/merchant/${theirs}/sessions`, {
      allowedOrigins: ['https://a.example'],
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('MERCHANT_NOT_FOUND');
    const own = await createMerchant(server);
    const { token } = await createSession(server, server.partner.apiKey, own);
    const again = await api(server, token).post(`/v1/partners/merchant/${own}/sessions`, {
      allowedOrigins: ['https://a.example'],
    });
    expect(again.status).toBe(403);
    expect(again.body.code).toBe('SESSION_SCOPE');
  });

  it('takes lifetimeSeconds only as a JSON number: "900", "yes" and true are 400', async () => {
    const merchantId = await createMerchant(server);
    for (const lifetimeSeconds of ['900', 'yes', true]) {
      const res = await api(server, server.partner.apiKey).post(`/v1/partners/merchant/${merchantId}/sessions`, {
        allowedOrigins: ['https://a.example'],
        lifetimeSeconds,
      });
      expect(res.status, JSON.stringify(lifetimeSeconds)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('refuses the token over /trpc beyond its scope too', async () => {
    const merchantId = await createMerchant(server);
    const { token } = await createSession(server, server.partner.apiKey, merchantId);
    const caller = server.caller(token);
    await expect(caller.merchant.list({})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const today = new Date().toISOString().slice(0, 10);
    const summary = await caller.stats.summary({ merchantId, startDate: today, endDate: today, timezone: 'UTC' });
    expect(summary.range.startDate).toBe(today);
  });
});

describe('merchant sessions: end of life', () => {
  it('answers 401 once expired', async () => {
    const merchantId = await createMerchant(server);
    const session = await createSession(server, server.partner.apiKey, merchantId, {
      allowedOrigins: ['https://a.example'],
      lifetimeSeconds: 1,
    });
    const probe = async () => (await api(server, session.token).get(summaryPath(merchantId))).status;
    expect(await probe()).toBe(200);
    const wait = Date.parse(session.expiresAt) - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait) + 20));
    const res = await api(server, session.token).get(summaryPath(merchantId));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
  });

  it('answers 401 within a second of its partner’s keys being revoked behind the process’s back', async () => {
    const partner = await server.createPartner();
    const merchantId = await createMerchant(server, partner.apiKey);
    const { token } = await createSession(server, partner.apiKey, merchantId);
    const probe = async () => (await api(server, token).get(summaryPath(merchantId))).status;
    expect(await probe()).toBe(200);
    expect(await probe()).toBe(200);
    // Plain SQL, as another process would: only the key table's notification can tell this one.
    await server.app.deps.db.execute(
      sql`update api_keys set revoked_at = now() where partner_id = ${partner.partnerId}::uuid`,
    );
    expect(await until(probe, 401, 1_000)).toBeLessThan(1_000);
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    'answers 401 within a second of a revocation from another connection to PostgreSQL',
    async () => {
      const partner = await server.createPartner();
      const merchantId = await createMerchant(server, partner.apiKey);
      const { token } = await createSession(server, partner.apiKey, merchantId);
      const probe = async () => (await api(server, token).get(summaryPath(merchantId))).status;
      expect(await probe()).toBe(200);
      const other = postgres(process.env.TEST_DATABASE_URL as string, { max: 1, onnotice: () => {} });
      try {
        await other`update api_keys set revoked_at = now() where partner_id = ${partner.partnerId}::uuid`;
      } finally {
        await other.end({ timeout: 5 });
      }
      expect(await until(probe, 401, 1_000)).toBeLessThan(1_000);
    },
  );

  it('ends with a rotation that cuts the old key, and lives with it through an overlap', async () => {
    const partner = await server.createPartner();
    const merchantId = await createMerchant(server, partner.apiKey);
    const { token } = await createSession(server, partner.apiKey, merchantId);
    const probe = async () => (await api(server, token).get(summaryPath(merchantId))).status;
    expect(await probe()).toBe(200);
    const { apiKey } = await server.rotateKey(partner.partnerId);
    expect(await probe()).toBe(200);
    const fresh = await createSession(server, apiKey, merchantId);
    await server.rotateKey(partner.partnerId, 0);
    expect(await probe()).toBe(401);
    expect((await api(server, fresh.token).get(summaryPath(merchantId))).status).toBe(401);
  });
});
