import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestServer,
  startWebhookReceiver,
  type TestPartner,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { collectOk, createMerchant, generateTag, listEvents, publishCname } from '../helpers/fixtures.js';

// Live and test mode are apart as two partners are (docs/decisions/test-mode.md), on every partner
// operation of the served OpenAPI document (a new operation is in the matrix without a line here):
// each operation is called with one mode's key on the other mode's objects, and must answer exactly
// what another partner's key of the caller's mode answers, naming none of the objects. Both directions.
type Mode = 'live' | 'test';
const MODES: Mode[] = ['live', 'test'];

let server: TestServer;
let receiver: TestWebhookReceiver;
/** The owner of the objects, and a stranger: the reference for "as between partners". */
let owner: TestPartner;
let stranger: TestPartner;
/** The owner's objects per mode: ids by the parameter name that carries them. */
const objects: Record<Mode, Record<string, string>> = { live: {}, test: {} };
let operations: Array<{ method: string; path: string; operation: Json }>;
let document: Json;

const keyOf = (partner: TestPartner, mode: Mode) => (mode === 'live' ? partner.apiKey : partner.testApiKey);

async function objectsOf(mode: Mode): Promise<Record<string, string>> {
  const key = keyOf(owner, mode);
  const client = api(server, key);
  const merchantId = await createMerchant(server, key, `${mode} merchant`);
  const custom = await generateTag(server, { key, merchantId });
  if (mode === 'live') publishCname(server, custom);
  const verified = await client.post('/v1/partners/tag/verify', { tagId: custom.tagId, subdomain: custom.domain });
  expect(verified.status).toBe(200);
  const preverified = await generateTag(server, { key, merchantId, domain: `shop.${owner.domain}` });
  await collectOk(server, preverified.tagId, [{ event_name: 'Purchase', data: { mode } }]);
  const webhook = await client.post('/v1/partners/webhooks', { url: receiver.url });
  expect(webhook.body.livemode).toBe(mode === 'live');
  const test = await client.post(`/v1/partners/webhooks/${webhook.body.webhookId}/test`);
  expect(test.status).toBe(202);
  // The event is stored by the event queue a moment after the 202.
  let listed: Json[] = [];
  for (const deadline = Date.now() + 10_000; listed.length === 0 && Date.now() < deadline; ) {
    listed = (await listEvents(server, merchantId, {}, key)).body.events;
    if (listed.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(listed).toHaveLength(1);
  return {
    merchantId,
    tagId: custom.tagId,
    preverifiedTagId: preverified.tagId,
    webhookId: webhook.body.webhookId,
    deliveryId: test.body.deliveryId,
    messageId: test.body.messageId,
    eventId: listed[0].id,
    subdomain: custom.domain,
  };
}

beforeAll(async () => {
  server = await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
  receiver = await startWebhookReceiver();
  owner = await server.createPartner('Owner');
  stranger = await server.createPartner('Stranger');
  for (const mode of MODES) objects[mode] = await objectsOf(mode);
  document = (await api(server).get('/openapi.json')).body;
  operations = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      const partnerOperation = (operation?.security ?? []).some((s: Json) => 'Authorization' in s);
      if (partnerOperation) operations.push({ method: method.toUpperCase(), path, operation });
    }
  }
}, 120_000);
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

/** A schema's example: its own, or its component's, or one built from its properties' examples. */
function exampleOf(schema: Json): Json {
  if (!schema) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.$ref) return exampleOf(document.components.schemas[schema.$ref.split('/').pop()]);
  if (schema.properties) {
    return Object.fromEntries(Object.entries<Json>(schema.properties).map(([name, s]) => [name, exampleOf(s)]));
  }
  return undefined;
}

/** The operation's request aimed at `ids`: path, required query and body from the document's examples. */
function requestOf(op: (typeof operations)[number], ids: Record<string, string>) {
  const url = new URL(
    op.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? randomUUID()),
    server.url,
  );
  for (const parameter of op.operation.parameters ?? []) {
    if (parameter.in !== 'query') continue;
    const value =
      ids[parameter.name] ?? (parameter.required ? (parameter.example ?? exampleOf(parameter.schema)) : undefined);
    if (value !== undefined) url.searchParams.set(parameter.name, String(value));
  }
  const content = op.operation.requestBody?.content?.['application/json'];
  let body: Json;
  if (content) {
    body = structuredClone(content.example ?? exampleOf(content.schema) ?? {});
    for (const name of Object.keys(body ?? {})) if (ids[name] !== undefined) body[name] = ids[name];
  }
  return { url, body };
}

/** Status, code and text of one call; a stream that opened is read for a moment, then closed. */
async function call(op: (typeof operations)[number], key: string, ids: Record<string, string>) {
  const { url, body } = requestOf(op, ids);
  const sent = `${url} ${JSON.stringify(body ?? null)}`;
  const res = await fetch(url, {
    method: op.method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  let text = '';
  if (/event-stream|ndjson/.test(res.headers.get('content-type') ?? '') && res.body) {
    const reader = res.body.getReader();
    const until = Date.now() + 1000;
    while (Date.now() < until) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 200))]);
      if (chunk === null) continue;
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    await reader.cancel().catch(() => {});
  } else {
    text = await res.text();
  }
  let code: string | undefined;
  try {
    code = JSON.parse(text).code;
  } catch {}
  return { status: res.status, code, text, sent };
}

describe('test mode: live and test data apart on every partner operation of the OpenAPI document', () => {
  it('covers the document: every partner operation, the trigger included', () => {
    expect(operations.length).toBeGreaterThanOrEqual(25);
    expect(operations.map((op) => `${op.method} ${op.path}`)).toEqual(
      expect.arrayContaining([
        'GET /v1/partners/merchant/{merchantId}',
        'GET /v1/partners/events/stream',
        'GET /v1/partners/events/export',
        'GET /v1/partners/stats/summary',
        'POST /v1/partners/test/tags/{tagId}/trigger',
      ]),
    );
  });

  for (const [from, to] of [
    ['live', 'test'],
    ['test', 'live'],
  ] as Array<[Mode, Mode]>) {
    it(`a ${to} key on ${from} objects answers as another partner's ${to} key, naming none of them`, async () => {
      const ids = objects[from];
      const rows: string[] = [];
      for (const op of operations) {
        const across = await call(op, keyOf(owner, to), ids);
        const reference = await call(op, keyOf(stranger, to), ids);
        const name = `${op.method} ${op.path}`;
        rows.push(`${name}: ${across.status} ${across.code ?? ''}`);
        expect({ status: across.status, code: across.code }, name).toEqual({
          status: reference.status,
          code: reference.code,
        });
        // Nothing of the other mode in the answer but what the request itself named (error messages echo it).
        for (const [what, id] of Object.entries(ids)) {
          if (!across.sent.includes(id)) expect(across.text, `${name} names the ${from} ${what}`).not.toContain(id);
        }
        // An operation on one of the objects finds nothing: as for another partner (403 or 404).
        if (/\{(merchantId|tagId|webhookId)\}/.test(op.path) && op.path !== '/v1/partners/test/tags/{tagId}/trigger') {
          expect([403, 404], `${name} ${across.text}`).toContain(across.status);
        }
      }
      console.log(`isolation ${to} key on ${from} objects (${rows.length} operations):\n  ${rows.join('\n  ')}`);
    }, 120_000);
  }

  it('the owner reads each object with its own mode key, and only there', async () => {
    for (const mode of MODES) {
      const client = api(server, keyOf(owner, mode));
      const { merchantId, tagId, webhookId } = objects[mode];
      const merchant = await client.get(`/v1/partners/merchant/${merchantId}`);
      expect(merchant.status).toBe(200);
      expect(merchant.body.livemode).toBe(mode === 'live');
      expect(merchant.body.tags.map((t: Json) => t.livemode)).toEqual([mode === 'live', mode === 'live']);
      expect((await client.get(`/v1/partners/tag/${tagId}`)).body.livemode).toBe(mode === 'live');
      // The matrix's creates made more objects, each in the mode of the key that made it.
      const listed = (await client.get('/v1/partners/merchant?limit=100')).body.merchants;
      expect(listed.map((m: Json) => m.merchantId)).toContain(merchantId);
      expect(new Set(listed.flatMap((m: Json) => [m.livemode, ...m.tags.map((t: Json) => t.livemode)]))).toEqual(
        new Set([mode === 'live']),
      );
      const hooks = (await client.get('/v1/partners/webhooks?limit=100')).body.webhooks;
      expect(hooks.map((h: Json) => h.webhookId)).toContain(webhookId);
      expect(new Set(hooks.map((h: Json) => h.livemode))).toEqual(new Set([mode === 'live']));
      const today = new Date().toISOString().slice(0, 10);
      const summary = await client.get(
        `/v1/partners/stats/summary?merchantId=${merchantId}&startDate=${today}&endDate=${today}`,
      );
      expect(summary.status).toBe(200);
      expect(summary.body.totals.events).toBe(1);
    }
  });
});
