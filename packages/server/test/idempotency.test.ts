import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient } from '../../sdk/src/index.js';
import { idempotencyKeys, merchants } from '../src/db/schema/index.js';
import { canonicalJson } from '../src/runtime/idempotency-store.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { startTcpProxy } from './helpers/hardening.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

function post(path: string, body: unknown, key: string | undefined, apiKey = server.partner.apiKey) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function merchantCount(partnerId: string, name: string): Promise<number> {
  const rows = await server.app.deps.db
    .select({ n: sql<number>`count(*)::int` })
    .from(merchants)
    .where(sql`${merchants.partnerId} = ${partnerId} and ${merchants.name} = ${name}`);
  return rows[0]?.n ?? 0;
}

describe('Idempotency-Key on POST /v1/partners/*', () => {
  it('replays the first response for the same key and body, creating one merchant', async () => {
    const key = randomUUID();
    const first = await post('/v1/partners/merchant', { name: 'Idem A' }, key);
    const firstBody = await first.json();
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await post('/v1/partners/merchant', { name: 'Idem A' }, key);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual(firstBody);
    expect(await merchantCount(server.partner.partnerId, 'Idem A')).toBe(1);
  });

  it('creates again without a key (no key, no deduplication)', async () => {
    await post('/v1/partners/merchant', { name: 'Idem B' }, undefined);
    await post('/v1/partners/merchant', { name: 'Idem B' }, undefined);
    expect(await merchantCount(server.partner.partnerId, 'Idem B')).toBe(2);
  });

  it('answers 409 IDEMPOTENCY_KEY_REUSED for the same key with a different body or path', async () => {
    const key = randomUUID();
    expect((await post('/v1/partners/merchant', { name: 'Idem C' }, key)).status).toBe(201);
    const other = await post('/v1/partners/merchant', { name: 'Idem C2' }, key);
    expect(other.status).toBe(409);
    expect(await other.json()).toEqual({ message: expect.any(String), code: 'IDEMPOTENCY_KEY_REUSED' });
    const otherPath = await post('/v1/partners/tag/generate', { name: 'Idem C' }, key);
    expect(otherPath.status).toBe(409);
    expect(await merchantCount(server.partner.partnerId, 'Idem C2')).toBe(0);
  });

  it('treats bodies equal up to key order and whitespace as the same request', async () => {
    const { merchantId } = (await (await post('/v1/partners/merchant', { name: 'Idem D' }, undefined)).json()) as {
      merchantId: string;
    };
    const key = randomUUID();
    const a = await post('/v1/partners/tag/generate', `{"merchantId":"${merchantId}","domain":"idem-d.com"}`, key);
    const b = await post(
      '/v1/partners/tag/generate',
      `{ "domain": "idem-d.com",\n "merchantId": "${merchantId}" }`,
      key,
    );
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(await b.json()).toEqual(await a.json());
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  it('scopes keys per partner: the same key from another partner is a new request', async () => {
    const other = await server.createPartner('Idem other');
    const key = randomUUID();
    const mine = (await (await post('/v1/partners/merchant', { name: 'Idem E' }, key)).json()) as {
      merchantId: string;
    };
    const theirs = await post('/v1/partners/merchant', { name: 'Idem E' }, key, other.apiKey);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(((await theirs.json()) as { merchantId: string }).merchantId).not.toBe(mine.merchantId);
  });

  it('runs concurrent requests with one key once; the others wait and replay', async () => {
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => post('/v1/partners/merchant', { name: 'Idem F' }, key)),
    );
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Array<{ merchantId: string }>;
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(bodies.map((b) => b.merchantId)).size).toBe(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
    expect(await merchantCount(server.partner.partnerId, 'Idem F')).toBe(1);
  });

  it('stores 4xx answers too (replayed), and rejects malformed keys with 400', async () => {
    const key = randomUUID();
    const bad = await post('/v1/partners/merchant', { name: '' }, key);
    expect(bad.status).toBe(400);
    const again = await post('/v1/partners/merchant', { name: '' }, key);
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    for (const malformed of ['x'.repeat(256), 'has space']) {
      const res = await post('/v1/partners/merchant', { name: 'Idem G' }, malformed);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        message: expect.stringContaining('Idempotency-Key'),
        code: 'VALIDATION_ERROR',
      });
    }
    expect(await merchantCount(server.partner.partnerId, 'Idem G')).toBe(0);
  });

  it('forgets a key after 24 h: an expired record runs the request again', async () => {
    const key = randomUUID();
    await post('/v1/partners/merchant', { name: 'Idem H' }, key);
    await server.app.deps.db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '25 hours'` })
      .where(eq(idempotencyKeys.key, key));
    const again = await post('/v1/partners/merchant', { name: 'Idem H' }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await merchantCount(server.partner.partnerId, 'Idem H')).toBe(2);
  });

  it('the SDK retrying a create after a dropped response makes one merchant', async () => {
    const port = Number(new URL(server.url).port);
    const proxy = await startTcpProxy(port);
    try {
      proxy.dropResponses(1);
      let attempts = 0;
      const keys: string[] = [];
      const client = new PartnerClient({
        apiKey: server.partner.apiKey,
        baseURL: `http://127.0.0.1:${proxy.port}`,
        maxRetries: 2,
        fetch: (input, init) => {
          attempts += 1;
          keys.push(new Headers(input instanceof Request ? input.headers : init?.headers).get('idempotency-key') ?? '');
          return fetch(input, init);
        },
      });
      const created = await client.merchants.create({ name: 'Idem SDK' });
      expect(attempts).toBe(2);
      expect(keys[0]).toBe(keys[1]);
      expect(keys[0]).not.toBe('');
      expect(await merchantCount(server.partner.partnerId, 'Idem SDK')).toBe(1);
      const list = await server.caller(server.partner.apiKey).merchant.list({ limit: 100 });
      expect(list.merchants.find((m) => m.name === 'Idem SDK')?.merchantId).toBe(created.merchantId);
    } finally {
      await proxy.close();
    }
  });
});
