// Issue 30: an Idempotency-Key replay stored the webhook signing secret of `create` and
// `rotate-secret` in plaintext for 24 h (the idempotency_keys table). Now no secret is ever stored
// for a replay: the first response carries it, a replay answers the same response with
// `secret: null` and `secretOmitted: true` (and `idempotent-replayed: true`), and does not run the
// call again. Over HTTP on the real database.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient } from '../../../sdk/src/index.js';
import { idempotencyKeys, webhookEndpoints } from '../../src/db/schema/index.js';
import { requestFingerprint } from '../../src/runtime/idempotency-store.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import type { Json } from '../helpers/api.js';
import { startTcpProxy } from '../helpers/hardening.js';

let server: TestServer;
beforeAll(async () => {
  // No DNS in the way of the creates: this is about what is stored, not the URL rules.
  server = await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
});
afterAll(() => server?.close());

async function post(path: string, body: unknown, key: string) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.partner.apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: (await res.json()) as Json };
}

async function storedBody(key: string): Promise<string> {
  const [row] = await server.app.deps.db
    .select({ body: idempotencyKeys.body })
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.partnerId, server.partner.partnerId), eq(idempotencyKeys.key, key)));
  return row?.body ?? '';
}

async function endpointSecret(webhookId: string): Promise<string | undefined> {
  const [row] = await server.app.deps.db
    .select({ secret: webhookEndpoints.secret })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, webhookId));
  return row?.secret;
}

describe('webhook secrets are never stored for Idempotency-Key replays', () => {
  it('create: the first response has the secret, the stored row and the replay do not', async () => {
    const key = randomUUID();
    const input = { url: `https://hooks-${randomUUID().slice(0, 8)}.partner-example.com/hook` };
    const first = await post('/v1/partners/webhooks', input, key);
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    expect(first.body.secret).toMatch(/^whsec_/);
    expect(first.body.secretOmitted).toBe(false);

    const stored = await storedBody(key);
    expect(stored).toContain(first.body.webhookId);
    expect(stored).not.toContain(first.body.secret);
    expect(stored).not.toContain('whsec_');

    const replay = await post('/v1/partners/webhooks', input, key);
    expect(replay.status).toBe(201);
    expect(replay.replayed).toBe('true');
    expect(replay.body).toEqual({ ...first.body, secret: null, secretOmitted: true });
    // Replayed, not run again: one endpoint, still signing with the first response's secret.
    expect(await endpointSecret(first.body.webhookId)).toBe(first.body.secret);
  });

  it('rotate-secret: the replay neither shows nor rotates the secret again', async () => {
    const created = await post(
      '/v1/partners/webhooks',
      { url: 'https://hooks.partner-example.com/rotate' },
      randomUUID(),
    );
    const path = `/v1/partners/webhooks/${created.body.webhookId}/rotate-secret`;
    const key = randomUUID();
    const first = await post(path, {}, key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ secret: expect.stringMatching(/^whsec_/), secretOmitted: false });
    expect(await storedBody(key)).not.toContain('whsec_');

    const replay = await post(path, {}, key);
    expect(replay.status).toBe(200);
    expect(replay.replayed).toBe('true');
    expect(replay.body).toEqual({ ...first.body, secret: null, secretOmitted: true });
    expect(await endpointSecret(created.body.webhookId)).toBe(first.body.secret);
  });

  it('the SDK retrying a create after a dropped response gets the endpoint, without the secret', async () => {
    const proxy = await startTcpProxy(Number(new URL(server.url).port));
    try {
      proxy.dropResponses(1);
      let attempts = 0;
      const client = new PartnerClient({
        apiKey: server.partner.apiKey,
        baseURL: `http://127.0.0.1:${proxy.port}`,
        maxRetries: 2,
        fetch: (input, init) => {
          attempts += 1;
          return fetch(input, init);
        },
      });
      const url = `https://hooks-${randomUUID().slice(0, 8)}.partner-example.com/sdk`;
      const created = await client.webhooks.create({ url });
      expect(attempts).toBe(2);
      expect(created).toMatchObject({ url, secret: null, secretOmitted: true });
      // One endpoint, and the documented way to a usable secret works.
      const endpoints = await server.app.deps.db
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(eq(webhookEndpoints.url, url));
      expect(endpoints.map((e) => e.id)).toEqual([created.webhookId]);
      const rotated = await client.webhooks.rotateSecret(created.webhookId);
      expect(rotated).toMatchObject({ secret: expect.stringMatching(/^whsec_/), secretOmitted: false });
      expect(await endpointSecret(created.webhookId)).toBe(rotated.secret);
    } finally {
      await proxy.close();
    }
  });

  it('a row stored before this rule (with the secret) is replayed without it', async () => {
    const key = randomUUID();
    const route = '/v1/partners/webhooks';
    const input = { url: 'https://hooks.partner-example.com/legacy' };
    const legacy = {
      webhookId: randomUUID(),
      url: input.url,
      events: null,
      description: null,
      // Replays answer the stored body as it was; this one is shaped as the document says today, so
      // the contract check of CI's recorded responses (scripts/contract-check.ts) holds it too.
      livemode: true,
      createdAt: new Date().toISOString(),
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    };
    await server.app.deps.db.insert(idempotencyKeys).values({
      partnerId: server.partner.partnerId,
      key,
      fingerprint: requestFingerprint('POST', route, input),
      status: 201,
      body: JSON.stringify(legacy),
    });
    const replay = await post(route, input, key);
    expect(replay.status).toBe(201);
    expect(replay.replayed).toBe('true');
    expect(replay.body).toEqual({ ...legacy, secret: null, secretOmitted: true });
  });

  it('responses without a secret are replayed unchanged', async () => {
    const key = randomUUID();
    const first = await post('/v1/partners/merchant', { name: 'No secret here' }, key);
    const replay = await post('/v1/partners/merchant', { name: 'No secret here' }, key);
    expect(replay.replayed).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(replay.body).not.toHaveProperty('secretOmitted');
  });
});
