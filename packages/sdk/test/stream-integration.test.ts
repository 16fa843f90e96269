// client.events.stream against the real server (PGlite in memory, or TEST_DATABASE_URL), started
// through `@partner/server/testing`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, PartnerClient, type StreamedEvent } from '../src/index.js';
import { startRealServer, type TestServer } from './real-server.js';

describe('client.events.stream against the real server', () => {
  let server: TestServer;
  let client: PartnerClient;
  let merchantId: string;
  let tagId: string;

  beforeAll(async () => {
    server = await startRealServer();
    client = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url, maxRetries: 1 });
    merchantId = (await client.merchants.create({ name: 'Stream Shop' })).merchantId;
    tagId = (await client.tags.generate({ merchantId, domain: server.partner.domain })).tagId;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  async function collect(events: { id: string; event_name: string }[]): Promise<void> {
    const res = await fetch(`${server.url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId, events }),
    });
    expect(res.status).toBe(202);
  }

  async function waitForStreams(size: number): Promise<void> {
    const deadline = Date.now() + 5000;
    while (server.app.deps.streams.size !== size) {
      if (Date.now() > deadline) throw new Error(`${server.app.deps.streams.size} open streams, want ${size}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('streams live events (filtered), then resumes from lastEventId with exactly the missed ones', async () => {
    const controller = new AbortController();
    const stream = client.events.stream({ merchantId, events: ['Purchase'] }, { signal: controller.signal });
    const got: StreamedEvent[] = [];
    const done = (async () => {
      for await (const event of stream) {
        got.push(event);
        if (got.length === 2) controller.abort();
      }
    })();
    await waitForStreams(1);
    await collect([
      { id: 'v-1', event_name: 'PageView' },
      { id: 'p-1', event_name: 'Purchase' },
    ]);
    await collect([{ id: 'p-2', event_name: 'Purchase' }]);
    await done;
    expect(got.map((e) => [e.id, e.event_name])).toEqual([
      ['p-1', 'Purchase'],
      ['p-2', 'Purchase'],
    ]);
    expect(got[0]?.seq).toBeLessThan(got[1]?.seq as number);
    expect(stream.lastEventId).toBe(String(got[1]?.seq));
    await waitForStreams(0);

    // Missed while disconnected: resumed from the last id, exactly these, in order.
    await collect(Array.from({ length: 5 }, (_, i) => ({ id: `m-${i}`, event_name: 'Purchase' })));
    const again = new AbortController();
    const resumed: StreamedEvent[] = [];
    for await (const event of client.events.stream(
      { merchantId, events: 'Purchase', lastEventId: stream.lastEventId as string },
      { signal: again.signal },
    )) {
      resumed.push(event);
      if (resumed.length === 5) again.abort();
    }
    expect(resumed.map((e) => e.id).sort()).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
    expect(resumed.every((e, i) => i === 0 || e.seq > (resumed[i - 1]?.seq as number))).toBe(true);
    await waitForStreams(0);
  });

  it("throws NotFoundError for another partner's merchant", async () => {
    const other = await server.createPartner('Other');
    const otherClient = new PartnerClient({ apiKey: other.apiKey, baseURL: server.url });
    const iterate = async () => {
      for await (const _ of otherClient.events.stream({ merchantId })) {
        // nothing
      }
    };
    await expect(iterate()).rejects.toMatchObject({ code: 'MERCHANT_NOT_FOUND' });
    await expect(iterate()).rejects.toBeInstanceOf(NotFoundError);
  });
});
