// The real-time event stream over real HTTP: REST SSE (`GET /v1/partners/events/stream`) and the
// tRPC subscription (`events.stream`), on PGlite or, with TEST_DATABASE_URL, the real PostgreSQL.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../src/app.js';
import type { Env } from '../src/kernel/env.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import { collectOk, createMerchant, MISSING_ID, preverifiedTag, type SentEvent } from './helpers/fixtures.js';
import { SseClient } from './helpers/sse.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { STREAM_PING_MS: '40' } });
});
afterAll(() => server?.close());

const STREAM = '/v1/partners/events/stream';

function streamUrl(merchantId: string, query: Record<string, string> = {}): string {
  return `${server.url}${STREAM}?${new URLSearchParams({ merchantId, ...query })}`;
}

function open(
  merchantId: string,
  options: { query?: Record<string, string>; lastEventId?: string; key?: string } = {},
) {
  return SseClient.open(streamUrl(merchantId, options.query), {
    apiKey: options.key ?? server.partner.apiKey,
    ...(options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId }),
  });
}

const batch = (prefix: string, n: number, name = 'PageView'): SentEvent[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, event_name: name, data: { i } }));

async function waitForHubSize(size: number, app: RunningApp = server.app): Promise<void> {
  const deadline = Date.now() + 5000;
  while (app.deps.streams.size !== size) {
    if (Date.now() > deadline) throw new Error(`hub has ${app.deps.streams.size} subscriptions, want ${size}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A second app (its own HTTP server and stream hub) on the same database, with other settings. */
async function secondApp(overrides: Partial<Env>): Promise<RunningApp> {
  return startApp({ ...server.app.deps.env, PORT: 0, ...overrides }, { database: server.app.database });
}

function openOn(app: RunningApp, merchantId: string, query: Record<string, string> = {}, paused = false) {
  return SseClient.open(`${app.url}${STREAM}?${new URLSearchParams({ merchantId, ...query })}`, {
    apiKey: server.partner.apiKey,
    paused,
  });
}

describe('GET /v1/partners/events/stream (REST SSE)', () => {
  it('streams newly ingested events in ingestion order with seq ids and the event fields', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, batch('before', 2)); // before the stream: not sent
    const stream = await open(tag.merchantId);
    expect(stream.status).toBe(200);
    expect(stream.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.res.headers['cache-control']).toBe('no-store');
    await collectOk(server, tag.tagId, [
      {
        id: 'a',
        muid: 'u1',
        event_name: 'Purchase',
        event_time: '2026-03-01T10:00:00.000Z',
        data: { value: 1 },
      },
    ]);
    await collectOk(server, tag.tagId, batch('b', 3, 'AddToCart'));
    await stream.waitForEvents(4);
    const events = stream.events<Json>();
    expect(events.map((e) => e.id)).toEqual(['a', 'b-0', 'b-1', 'b-2']);
    expect(events[0]).toEqual({
      seq: expect.any(Number),
      id: 'a',
      muid: 'u1',
      event_name: 'Purchase',
      event_time: '2026-03-01T10:00:00.000Z',
      raw_data: JSON.stringify({ value: 1 }),
      consent: 'not_required',
    });
    const ids = stream.frames.filter((f) => f.event === 'event').map((f) => Number(f.id));
    expect(ids).toEqual(events.map((e) => e.seq));
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(stream.comments).toContain('connected');
    stream.close();
    await waitForHubSize(0);
  });

  it('sends keep-alive ping comments', async () => {
    const tag = await preverifiedTag(server);
    const stream = await open(tag.merchantId);
    await stream.waitFor(() => stream.comments.filter((c) => c === 'ping').length >= 2, 3000, 'two pings');
    stream.close();
  });

  it('filters by event names (comma list)', async () => {
    const tag = await preverifiedTag(server);
    const stream = await open(tag.merchantId, { query: { events: 'Purchase, Search' } });
    await collectOk(server, tag.tagId, [
      { id: '1', event_name: 'PageView' },
      { id: '2', event_name: 'Purchase' },
      { id: '3', event_name: 'Search' },
      { id: '4', event_name: 'AddToCart' },
    ]);
    await collectOk(server, tag.tagId, [{ id: '5', event_name: 'Purchase' }]);
    await stream.waitForEvents(3);
    await new Promise((r) => setTimeout(r, 100));
    expect(stream.events<Json>().map((e) => e.id)).toEqual(['2', '3', '5']);
    stream.close();
  });

  it('resumes with Last-Event-ID: exactly the 50 missed events, in order, then live', async () => {
    const tag = await preverifiedTag(server);
    const first = await open(tag.merchantId);
    await collectOk(server, tag.tagId, batch('early', 5));
    await first.waitForEvents(5);
    const lastId = first.frames.at(-1)?.id;
    expect(lastId).toMatch(/^\d+$/);
    first.close();
    await waitForHubSize(0);

    const missed = batch('missed', 50);
    for (let i = 0; i < 50; i += 10) await collectOk(server, tag.tagId, missed.slice(i, i + 10));
    const resumed = await open(tag.merchantId, { lastEventId: lastId as string });
    await resumed.waitForEvents(50);
    await collectOk(server, tag.tagId, batch('live', 2));
    await resumed.waitForEvents(52);
    await new Promise((r) => setTimeout(r, 100));
    const got = resumed.events<Json>().map((e) => e.id);
    expect(got).toEqual([...missed.map((e) => e.id), 'live-0', 'live-1']);
    resumed.close();

    // The same through the `lastEventId` query parameter.
    const viaQuery = await open(tag.merchantId, { query: { lastEventId: lastId as string } });
    await viaQuery.waitForEvents(52);
    expect(viaQuery.events<Json>().map((e) => e.id)).toEqual(got);
    viaQuery.close();
  });

  it('reads a resume backlog larger than the buffer page by page, without cutting the consumer off', async () => {
    const small = await secondApp({ STREAM_BUFFER_LIMIT: 7 });
    try {
      const tag = await preverifiedTag(server);
      await collectOk(server, tag.tagId, batch('x', 40));
      const stream = await openOn(small, tag.merchantId, { lastEventId: '0' });
      await stream.waitForEvents(40);
      const got = stream.events<Json>();
      expect(got.map((e) => e.id).sort()).toEqual(
        batch('x', 40)
          .map((e) => e.id)
          .sort(),
      );
      expect(got.every((e, i) => i === 0 || e.seq > got[i - 1].seq)).toBe(true);
      expect(stream.frames.some((f) => f.event === 'error')).toBe(false);
      stream.close();
    } finally {
      await small.close();
    }
  });

  it('never sends another merchant’s events', async () => {
    const mine = await preverifiedTag(server);
    const other = await server.createPartner('Other');
    const theirs = await preverifiedTag(server, other);
    const stream = await open(mine.merchantId);
    await collectOk(server, theirs.tagId, batch('theirs', 3));
    await collectOk(server, mine.tagId, batch('mine', 1));
    await stream.waitForEvents(1);
    await new Promise((r) => setTimeout(r, 150));
    expect(stream.events<Json>().map((e) => e.id)).toEqual(['mine-0']);
    stream.close();
  });
});

describe('GET /v1/partners/events/stream: auth, isolation and bad input (JSON errors before any stream)', () => {
  async function failure(url: string, headers: Record<string, string> = {}) {
    const res = await fetch(url, { headers });
    const text = await res.text();
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    return { status: res.status, body: JSON.parse(text) as Json };
  }

  it('401 without a key, with the spec body', async () => {
    const merchantId = await createMerchant(server);
    expect(await failure(streamUrl(merchantId))).toEqual({
      status: 401,
      body: { statusCode: 401, message: 'Bearer token is required', error: 'Unauthorized' },
    });
  });

  it('401 with a wrong key', async () => {
    const merchantId = await createMerchant(server);
    const res = await failure(streamUrl(merchantId), { authorization: 'Bearer mp_live_nope' });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
  });

  it("404 MERCHANT_NOT_FOUND for another partner's merchant and for a missing one", async () => {
    const other = await server.createPartner('Other');
    const theirs = await preverifiedTag(server, other);
    for (const merchantId of [theirs.merchantId, MISSING_ID]) {
      const res = await failure(streamUrl(merchantId), { authorization: `Bearer ${server.partner.apiKey}` });
      expect(res).toEqual({ status: 404, body: { message: expect.any(String), code: 'MERCHANT_NOT_FOUND' } });
    }
    expect(server.app.deps.streams.size).toBe(0);
  });

  it('400 VALIDATION_ERROR for a bad merchantId, lastEventId or names', async () => {
    const merchantId = await createMerchant(server);
    const auth = { authorization: `Bearer ${server.partner.apiKey}` };
    const bad = [
      `${server.url}${STREAM}?merchantId=nope`,
      `${server.url}${STREAM}`,
      streamUrl(merchantId, { lastEventId: 'abc' }),
      streamUrl(merchantId, { events: 'x'.repeat(101) }),
    ];
    for (const url of bad) {
      const res = await failure(url, auth);
      expect(res.status, url).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const header = await failure(streamUrl(merchantId), { ...auth, 'last-event-id': '-1' });
    expect(header.status).toBe(400);
  });

  it("429 RATE_LIMITED once the key's request budget is spent (opening a stream is one request)", async () => {
    const limited = await secondApp({ RATE_LIMIT_PER_MINUTE: 1 });
    try {
      const merchantId = await createMerchant(server);
      const first = await openOn(limited, merchantId);
      expect(first.status).toBe(200);
      first.close();
      const res = await fetch(`${limited.url}${STREAM}?merchantId=${merchantId}`, {
        headers: { authorization: `Bearer ${server.partner.apiKey}` },
      });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await res.json()).toEqual({ message: expect.any(String), code: 'RATE_LIMITED' });
    } finally {
      await limited.close();
    }
  });

  it('405 (Allow: GET) for a method other than GET', async () => {
    const merchantId = await createMerchant(server);
    const res = await api(server, server.partner.apiKey).post(`${STREAM}?merchantId=${merchantId}`, {});
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
  });
});

describe('slow consumers and shutdown', () => {
  it('cuts off a consumer that stops reading: a final error event, then the stream closes', async () => {
    const small = await secondApp({ STREAM_BUFFER_LIMIT: 20 });
    try {
      const tag = await preverifiedTag(server);
      const stream = await openOn(small, tag.merchantId, {}, true);
      // 1500 events of ~16 KB (24 MB): far more than the socket buffers hold. Inserted in one
      // statement straight into the table: every insert path fires the notify trigger.
      const filler = JSON.stringify({ pad: 'x'.repeat(16_000) });
      await server.app.deps.db.execute(sql`
        insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
        select ${tag.merchantId}::uuid, 'slow-' || g, ${tag.tagId}::uuid, 'm', 'PageView', now(), ${filler}
        from generate_series(1, 1500) g`);
      const deadline = Date.now() + 10_000;
      while (small.deps.streams.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(small.deps.streams.size).toBe(0);
      stream.resume();
      await stream.closed;
      const last = stream.frames.at(-1);
      expect(last?.event).toBe('error');
      expect(JSON.parse(last?.data ?? '{}')).toEqual({ message: expect.any(String), code: 'STREAM_CONSUMER_TOO_SLOW' });
      const got = stream.events<Json>();
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(1500);
      // What it got is a gap-free prefix: resuming from its last id gets the rest.
      expect(got.map((e) => e.id)).toEqual(got.map((_, i) => `slow-${i + 1}`));
    } finally {
      await small.close();
    }
  });

  it('app.close() ends open streams promptly', async () => {
    const own = await secondApp({});
    const tag = await preverifiedTag(server);
    const stream = await openOn(own, tag.merchantId);
    await waitForHubSize(1, own);
    const started = Date.now();
    await own.close();
    await stream.closed;
    expect(stream.ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('tRPC subscription events.stream', () => {
  function trpcUrl(input: Record<string, unknown>, lastEventId?: string): string {
    const params = new URLSearchParams({ input: JSON.stringify(input) });
    if (lastEventId) params.set('lastEventId', lastEventId);
    return `${server.url}/trpc/events.stream?${params}`;
  }

  it('streams tracked events over SSE and resumes from lastEventId', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, batch('t', 3));
    const stream = await SseClient.open(trpcUrl({ merchantId: tag.merchantId }, '0'), {
      apiKey: server.partner.apiKey,
    });
    expect(stream.status).toBe(200);
    await stream.waitFor(() => stream.frames.filter((f) => f.id).length >= 3, 5000, 'three tracked events');
    const tracked = stream.frames.filter((f) => f.id);
    const data = tracked.map((f) => JSON.parse(f.data) as Json);
    expect(data.map((d) => d.id)).toEqual(['t-0', 't-1', 't-2']);
    expect(tracked.map((f) => f.id)).toEqual(data.map((d) => String(d.seq)));
    stream.close();

    const resumed = await SseClient.open(trpcUrl({ merchantId: tag.merchantId }, tracked[0]?.id), {
      apiKey: server.partner.apiKey,
    });
    await collectOk(server, tag.tagId, batch('u', 1, 'Purchase'));
    await resumed.waitFor(() => resumed.frames.filter((f) => f.id).length >= 3, 5000, 'resumed events');
    expect(resumed.frames.filter((f) => f.id).map((f) => (JSON.parse(f.data) as Json).id)).toEqual([
      't-1',
      't-2',
      'u-0',
    ]);
    resumed.close();
  });

  it("rejects another partner's merchant with MERCHANT_NOT_FOUND and a missing key with UNAUTHORIZED", async () => {
    const other = await server.createPartner('Other');
    const theirs = await preverifiedTag(server, other);
    const mine = server.caller(server.partner.apiKey);
    const iterable = await mine.events.stream({ merchantId: theirs.merchantId });
    await expect(async () => {
      for await (const _ of iterable) break;
    }).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(theirs.merchantId) });
    await expect(server.caller().events.stream({ merchantId: theirs.merchantId })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('PostgreSQL LISTEN connection loss', () => {
  it('re-listens after its connection is killed and delivers what was committed meanwhile', async () => {
    const tag = await preverifiedTag(server);
    const stream = await open(tag.merchantId);
    await collectOk(server, tag.tagId, batch('pre', 1));
    await stream.waitForEvents(1);
    const killed = (await server.app.deps.db.execute(
      sql`select pg_terminate_backend(pid) as ok from pg_stat_activity where query ilike 'listen %partner_events%' and application_name = ${`partner-tags:${process.pid}`}`,
    )) as unknown as { ok: boolean }[];
    expect(killed.length).toBeGreaterThan(0);
    await collectOk(server, tag.tagId, batch('during', 3));
    await stream.waitForEvents(4, 10_000);
    await collectOk(server, tag.tagId, batch('after', 1));
    await stream.waitForEvents(5, 10_000);
    expect(stream.events<Json>().map((e) => e.id)).toEqual(['pre-0', 'during-0', 'during-1', 'during-2', 'after-0']);
    stream.close();
  });
});
