import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { createMerchant } from '../helpers/fixtures.js';

describe('concurrent event-stream cap per partner (STREAM_MAX_PER_PARTNER)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { STREAM_MAX_PER_PARTNER: '2' } });
  });
  afterAll(() => server?.close());

  it('answers the stream over the cap 429 RATE_LIMITED JSON with Retry-After, before it starts; a closed one frees its slot', async () => {
    const merchantId = await createMerchant(server);
    const open = async () => {
      const controller = new AbortController();
      const res = await fetch(`${server.url}/v1/partners/events/stream?merchantId=${merchantId}`, {
        headers: { authorization: `Bearer ${server.partner.apiKey}` },
        signal: controller.signal,
      });
      return { res, close: () => controller.abort() };
    };
    const first = await open();
    const second = await open();
    expect(first.res.status).toBe(200);
    expect(second.res.status).toBe(200);
    const over = await open();
    expect(over.res.status).toBe(429);
    expect(over.res.headers.get('content-type')).toMatch(/application\/json/);
    expect(over.res.headers.get('retry-after')).toBe('5');
    expect(await over.res.json()).toEqual({ message: expect.any(String), code: 'RATE_LIMITED' });
    // Another partner is not affected.
    const other = await server.createPartner('Other');
    const otherMerchant = await createMerchant(server, other.apiKey);
    const theirs = await fetch(`${server.url}/v1/partners/events/stream?merchantId=${otherMerchant}`, {
      headers: { authorization: `Bearer ${other.apiKey}` },
    });
    expect(theirs.status).toBe(200);
    await theirs.body?.cancel();
    first.close();
    let reopened = 0;
    for (let i = 0; i < 100 && reopened !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const again = await open();
      reopened = again.res.status;
      if (reopened === 200) again.close();
      else await again.res.arrayBuffer();
    }
    expect(reopened).toBe(200);
    second.close();
  });

  it("tRPC events.stream over the cap: HTTP 429 with Retry-After and tRPC's error body, before any stream (no 200)", async () => {
    const partner = await server.createPartner('Trpc cap');
    const merchantId = await createMerchant(server, partner.apiKey);
    const url = `${server.url}/trpc/events.stream?${new URLSearchParams({ input: JSON.stringify({ merchantId }) })}`;
    const open = async () => {
      const controller = new AbortController();
      const res = await fetch(url, {
        headers: { authorization: `Bearer ${partner.apiKey}` },
        signal: controller.signal,
      });
      return { res, close: () => controller.abort() };
    };
    const first = await open();
    const second = await open();
    expect(first.res.status).toBe(200);
    expect(second.res.status).toBe(200);
    expect(first.res.headers.get('content-type')).toMatch(/text\/event-stream/);
    // Both slots are held once the subscriptions started (their first frame arrived).
    for (const { res } of [first, second]) await res.body?.getReader().read();
    const over = await open();
    expect(over.res.status).toBe(429);
    expect(over.res.headers.get('retry-after')).toBe('5');
    expect(over.res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await over.res.json()).toMatchObject({
      error: {
        message: expect.stringMatching(/Too many open event streams/),
        data: { code: 'RATE_LIMITED', httpStatus: 429, retryAfter: 5, path: 'events.stream' },
      },
    });
    // A bad key: 401 before any stream too, in the same tRPC error body.
    const bad = await fetch(url, { headers: { authorization: 'Bearer pt_live_nope' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: { data: { code: 'UNAUTHORIZED', httpStatus: 401 } } });
    first.close();
    second.close();
  });
});
