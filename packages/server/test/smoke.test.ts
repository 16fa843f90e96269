import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('smoke', () => {
  it('creates a merchant and verifies a custom domain against loopback DNS', async () => {
    const auth = { authorization: `Bearer ${server.partner.apiKey}`, 'content-type': 'application/json' };
    const created = await fetch(`${server.url}/v1/partners/merchant`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Acme' }),
    });
    expect(created.status).toBe(201);
    const { merchantId } = (await created.json()) as { merchantId: string };
    const gen = await fetch(`${server.url}/v1/partners/tag/generate`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ merchantId, domain: 'shop-example.com' }),
    });
    const tag = (await gen.json()) as { tagId: string; record: { name: string; value: string } };
    expect(gen.status).toBe(200);
    server.dns.setCname(`${tag.record.name}.shop-example.com`, tag.record.value);
    const verify = await fetch(`${server.url}/v1/partners/tag/verify`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ tagId: tag.tagId, subdomain: 'shop-example.com' }),
    });
    expect(await verify.json()).toEqual({ verified: true });
    const list = await server.caller(server.partner.apiKey).merchant.list({});
    expect(list.merchants[0]?.tags[0]?.status).toBe('waiting_for_events');
  });
});
