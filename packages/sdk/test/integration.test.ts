// The SDK against the real server (PGlite in memory, or TEST_DATABASE_URL; with its loopback DNS
// server), started through `@partner/server/testing`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PartnerClient,
  type TrackingEvent,
} from '../src/index.js';
import { startRealServer, type TestServer } from './real-server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NAMES = ['PageView', 'Purchase', 'AddToCart'] as const;
const EVENT_COUNT = 30;
// Events one minute apart, ending ten minutes ago.
const BASE_TIME = Date.now() - (EVENT_COUNT + 10) * 60_000;

const sent = Array.from({ length: EVENT_COUNT }, (_, i) => ({
  id: `sdk-it-${i}`,
  event_name: NAMES[i % NAMES.length] as string,
  event_time: new Date(BASE_TIME + i * 60_000).toISOString(),
  muid: `user-${i % 4}`,
  data: { i, value: i * 10 },
}));

describe('SDK against the real server', () => {
  let server: TestServer;
  let client: PartnerClient;
  let merchantId: string;
  let preverifiedTagId: string;

  beforeAll(async () => {
    server = await startRealServer();
    client = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url, maxRetries: 1, timeout: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('creates a merchant and lists it', async () => {
    const created = await client.merchants.create({ name: 'SDK Integration Store' });
    expect(created.merchantId).toMatch(UUID);
    merchantId = created.merchantId;
    const all = await client.merchants.list({ limit: 100 }).toArray({ limit: 1000 });
    const mine = all.find((m) => m.merchantId === merchantId);
    expect(mine?.name).toBe('SDK Integration Store');
    expect(mine?.tags).toEqual([]);
    expect(Number.isNaN(Date.parse(mine?.createdAt ?? ''))).toBe(false);
  });

  it('shows its responses: the x-request-id and the RateLimit-* state the server sends', async () => {
    const call = client.merchants.create({ name: 'SDK Responses Store' });
    const { data, response, requestId, rateLimit } = await call.withResponse();
    expect(data.merchantId).toMatch(UUID);
    expect(response.status).toBe(201);
    expect(requestId).toMatch(/\S/);
    expect(requestId).toBe(response.headers.get('x-request-id'));
    // The server sends RateLimit-Limit / -Remaining / -Reset (test server: 1 000 000 a minute).
    expect(rateLimit).toMatchObject({ source: 'RateLimit-*', limit: 1_000_000 });
    expect(rateLimit?.remaining).toBeLessThan(1_000_000);
    expect(rateLimit?.resetSeconds).toBeGreaterThanOrEqual(0);
    const page = await client.merchants.list({ limit: 1 });
    expect(page.requestId).toMatch(/\S/);
    expect(page.rateLimit?.limit).toBe(1_000_000);
    const raw = await client.merchants.list({ limit: 1 }).asResponse();
    expect(((await raw.json()) as { merchants: unknown[] }).merchants).toHaveLength(1);
  });

  it('generates a preverified tag (active) and returns it again on a second call', async () => {
    const domain = `shop.${server.partner.domain}`;
    const tag = await client.tags.generate({ merchantId, domain });
    expect(tag.tagId).toMatch(UUID);
    expect(tag.status).toBe('active');
    expect(tag.message).toBe('New tag created successfully');
    expect(tag.record).toMatchObject({ type: 'CNAME', ttl: 300 });
    preverifiedTagId = tag.tagId;
    const again = await client.tags.generate({ merchantId, domain });
    expect(again.tagId).toBe(tag.tagId);
    expect(again.message).toBe('Existing tag retrieved');
  });

  it('generates a custom tag (inactive), fails to verify it without DNS, then verifies it', async () => {
    const domain = 'shop-example.com';
    const tag = await client.tags.generate({ merchantId, domain });
    expect(tag.status).toBe('inactive');
    expect(tag.record.type).toBe('CNAME');
    const subdomain = `${tag.record.name}.${domain}`;

    const failure = await client.tags.verify({ tagId: tag.tagId, subdomain }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(APIError);
    expect([400, 422]).toContain((failure as APIError).status);
    expect((failure as APIError).code).toBe('VALIDATION_ERROR');
    // Typed diagnostics: why DNS did not prove the domain, and what it should say.
    const details = (failure as APIError).details;
    expect(details).toEqual({
      reason: 'RECORD_NOT_FOUND',
      expected: { type: 'CNAME', name: subdomain, value: tag.record.value },
      found: [],
      checkedAt: expect.any(String),
    });
    const before = await client.tags.retrieve(tag.tagId);
    expect(before).toMatchObject({ tagId: tag.tagId, merchantId, status: 'inactive', isVerified: false });
    expect(before.lastCheck).toMatchObject({ ok: false, reason: 'RECORD_NOT_FOUND', found: [] });

    server.dns.setCname(subdomain, tag.record.value);
    await expect(client.tags.verify({ tagId: tag.tagId, subdomain })).resolves.toEqual({ verified: true });
    const after = await client.tags.retrieve(tag.tagId);
    expect(after).toMatchObject({
      hostname: subdomain,
      domain,
      status: 'waiting_for_events',
      isConnected: true,
      isVerified: true,
      record: tag.record,
      lastCheck: { ok: true },
    });
    expect(after.verifiedAt).not.toBeNull();
    const missing = await client.tags.retrieve('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as APIError).code).toBe('TAG_NOT_FOUND');
    expect((missing as APIError).details).toBeNull();

    const merchants = await client.merchants.list({ limit: 100 }).toArray({ limit: 1000 });
    const tags = merchants.find((m) => m.merchantId === merchantId)?.tags ?? [];
    expect(tags.map((t) => t.tagId).sort()).toEqual([preverifiedTagId, tag.tagId].sort());
    expect(tags.find((t) => t.tagId === tag.tagId)).toMatchObject({
      status: 'waiting_for_events',
      isVerified: true,
      isConnected: true,
    });
  });

  it('ingests events through /v1/collect', async () => {
    const res = await fetch(`${server.url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId: preverifiedTagId, events: sent }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    expect(await res.json()).toEqual({ accepted: EVENT_COUNT });
  });

  it('iterates filtered events across pages with for await, in order', async () => {
    // A range covering events 5..24, names Purchase and PageView only.
    const startDate = new Date(BASE_TIME + 5 * 60_000);
    const endDate = new Date(BASE_TIME + 24 * 60_000).toISOString();
    const expected = sent.filter(
      (e, i) => i >= 5 && i <= 24 && (e.event_name === 'Purchase' || e.event_name === 'PageView'),
    );
    expect(expected.length).toBeGreaterThan(5);

    const got: TrackingEvent[] = [];
    for await (const event of client.events.list({
      merchantId,
      events: ['Purchase', 'PageView'],
      limit: 5,
      startDate,
      endDate,
      sortOrder: 'asc',
    })) {
      got.push(event);
    }
    expect(got.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(got.map((e) => Date.parse(e.event_time))).toEqual(expected.map((e) => Date.parse(e.event_time)));
    const first = got[0] as TrackingEvent;
    expect(JSON.parse(first.raw_data)).toEqual(expected[0]?.data);
    expect(first.muid).toBe(expected[0]?.muid);

    // Default order is newest first; the comma-string form of `events` filters the same way.
    const desc = await client.events
      .list({ merchantId, events: 'Purchase,PageView', limit: 5, startDate, endDate })
      .toArray({ limit: 1000 });
    expect(desc.map((e) => e.id)).toEqual(expected.map((e) => e.id).reverse());
  });

  it('reports pagination and walks pages', async () => {
    const page = await client.events.list({ merchantId, limit: 7, sortOrder: 'asc' });
    expect(page.pagination).toMatchObject({
      currentPage: 1,
      itemsPerPage: 7,
      totalItems: EVENT_COUNT,
      totalPages: Math.ceil(EVENT_COUNT / 7),
      hasNextPage: true,
      hasPreviousPage: false,
    });
    const sizes: number[] = [];
    for await (const p of page.iterPages()) sizes.push(p.data.length);
    expect(sizes).toEqual([7, 7, 7, 7, 2]);
    const capped = await page.toArray({ limit: 10 });
    expect(capped.map((e) => e.id)).toEqual(sent.slice(0, 10).map((e) => e.id));
    const byName = await client.events
      .list({ merchantId, sortBy: 'event_name', sortOrder: 'asc', limit: 100 })
      .toArray({ limit: 100 });
    const names = byName.map((e) => e.event_name);
    expect(names).toEqual([...names].sort());
  });

  it("iterates by the server's cursors: page 2 on asks for cursor=, not page=", async () => {
    const urls: string[] = [];
    const recording = new PartnerClient({
      apiKey: server.partner.apiKey,
      baseURL: server.url,
      maxRetries: 1,
      fetch: (input, init) => {
        urls.push(input instanceof Request ? input.url : String(input));
        return fetch(input, init);
      },
    });
    const got: string[] = [];
    for await (const event of recording.events.list({ merchantId, limit: 4, sortBy: 'event_name' })) got.push(event.id);
    const byOffset = await client.events.list({ merchantId, limit: 100, sortBy: 'event_name' });
    expect(got).toEqual(byOffset.data.map((e) => e.id));
    expect(urls).toHaveLength(Math.ceil(EVENT_COUNT / 4));
    expect(urls[0]).not.toContain('cursor=');
    for (const url of urls.slice(1)) {
      expect(new URL(url).searchParams.get('cursor')).toMatch(/\S+\.\S+/);
      expect(new URL(url).searchParams.has('page')).toBe(false);
    }
    const first = await recording.events.list({ merchantId, limit: 4, sortBy: 'event_name' });
    expect(first.pagination.nextCursor).toEqual(expect.any(String));
    const resumed = await recording.events.list({
      merchantId,
      limit: 4,
      sortBy: 'event_name',
      cursor: first.pagination.nextCursor as string,
    });
    expect(resumed.data.map((e) => e.id)).toEqual(got.slice(4, 8));
    expect(resumed.pagination.currentPage).toBe(2);
  });

  it('exports every event as typed events, the same as the list, with a summary; raw() gives the bytes', async () => {
    const exported = client.events.export({ merchantId, sortOrder: 'asc' });
    const got: TrackingEvent[] = [];
    for await (const event of exported) got.push(event);
    const listed = await client.events.list({ merchantId, sortOrder: 'asc', limit: 100 });
    expect(got).toEqual(listed.data);
    expect(exported.summary).toEqual({ complete: true, count: got.length, cursor: expect.any(String) });
    expect(exported.lastId).toBe(got[got.length - 1]?.id);
    const resumed = [];
    for await (const event of client.events.export({ merchantId, sortOrder: 'asc', afterId: got[9]?.id as string })) {
      resumed.push(event);
    }
    expect(resumed).toEqual(got.slice(10));
    const raw = await client.events.export({ merchantId, events: ['Purchase'] }).raw();
    expect(raw.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = (await raw.text()).trim().split('\n');
    expect(JSON.parse(lines[lines.length - 1] as string)).toMatchObject({ complete: true, count: lines.length - 1 });
    const missing = await client.events
      .export({ merchantId: '00000000-0000-4000-8000-000000000000' })
      .raw()
      .catch((e) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
  });

  it('per-call options through the real server: a chosen key replays, on a GET it is harmless', async () => {
    const key = `sdk-it-${Date.now()}`;
    const first = await client.merchants.create({ name: 'SDK Keyed Store' }, { idempotencyKey: key }).withResponse();
    const again = await client.merchants.create({ name: 'SDK Keyed Store' }, { idempotencyKey: key }).withResponse();
    expect(again.data).toEqual(first.data);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(first.response.headers.get('idempotent-replayed')).toBeNull();
    // The key goes with every request of a call whatever the method: the server reads it on POSTs only.
    const page = await client.merchants.list({ limit: 1 }, { idempotencyKey: key, headers: { 'x-trace': 'it' } });
    expect(page.response.status).toBe(200);
    const events = await client.events
      .export({ merchantId }, { idempotencyKey: key, timeout: 10_000, maxRetries: 0 })
      .raw();
    expect(events.status).toBe(200);
    await events.body?.cancel();
    // An aborted signal sends nothing.
    await expect(client.merchants.retrieve(merchantId, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      APIUserAbortError,
    );
  });

  it('maps server errors to the SDK classes', async () => {
    const unknownMerchant = '00000000-0000-4000-8000-000000000000';
    const notFound = await client.events.list({ merchantId: unknownMerchant }).catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(NotFoundError);
    expect(notFound).toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND' });
    expect((notFound as APIError).requestId).toBeTruthy();

    await expect(client.tags.generate({ merchantId: unknownMerchant, domain: 'example.com' })).rejects.toMatchObject({
      constructor: NotFoundError,
      code: 'MERCHANT_NOT_FOUND',
    });

    const badKey = await client
      .withOptions({ apiKey: 'mp_live_not_a_real_key' })
      .merchants.list()
      .catch((e: unknown) => e);
    expect(badKey).toBeInstanceOf(AuthenticationError);
    expect(badKey).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });

    const noKey = await client
      .withOptions({ headers: { authorization: null } })
      .merchants.list()
      .catch((e: unknown) => e);
    expect(noKey).toBeInstanceOf(AuthenticationError);
    expect(noKey).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });

    const badDomain = await client.tags
      .generate({ merchantId, domain: 'https://not a domain' })
      .catch((e: unknown) => e);
    expect(badDomain).toBeInstanceOf(BadRequestError);
    expect(badDomain).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('retries a POST whose response was lost without creating twice (same Idempotency-Key)', async () => {
    let attempts = 0;
    // The first response is dropped after the server has handled the request, as a broken
    // connection would; the SDK retries with the same key and the server replays its answer.
    const lossyClient = client.withOptions({
      maxRetries: 2,
      fetch: async (input, init) => {
        attempts++;
        const response = await fetch(input, init);
        if (attempts === 1) {
          await response.arrayBuffer();
          throw new TypeError('fetch failed: connection reset (simulated)');
        }
        return response;
      },
    });
    const name = `Idempotent Store ${Date.now()}`;
    const created = await lossyClient.merchants.create({ name });
    expect(attempts).toBe(2);
    const all = await client.merchants.list({ limit: 100 }).toArray({ limit: 1000 });
    expect(all.filter((m) => m.name === name).map((m) => m.merchantId)).toEqual([created.merchantId]);

    // The caller's own key: the same call answers the same; another body under it is a 409.
    const key = `it-${Date.now()}`;
    const first = await client.merchants.create({ name: 'Keyed' }, { idempotencyKey: key });
    const second = await client.merchants.create({ name: 'Keyed' }, { idempotencyKey: key });
    expect(second.merchantId).toBe(first.merchantId);
    const reused = await client.merchants
      .create({ name: 'Another name' }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(ConflictError);
    expect(reused).toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it("keeps partners apart: another partner's key sees 404 for this merchant", async () => {
    const other = await server.createPartner('Other Platform');
    const otherClient = client.withOptions({ apiKey: other.apiKey });
    await expect(otherClient.events.list({ merchantId })).rejects.toBeInstanceOf(NotFoundError);
    const theirs = await otherClient.merchants.list().toArray({ limit: 100 });
    expect(theirs.map((m) => m.merchantId)).not.toContain(merchantId);
  });
});
