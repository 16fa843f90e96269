// Issue 35: per-request options `{ signal, timeout, maxRetries, idempotencyKey, headers }` on every
// method, as the last argument, merged over the client's defaults; the idempotency key is made once
// per logical call when not given.
import { delay, HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  InternalServerError,
  type PartnerClient,
  type RequestOptions,
} from '../src/index.js';
import {
  BASE_URL,
  type Captured,
  capture,
  makeClient,
  reply,
  server,
  UUID_V4,
  useMsw,
  useRecordedSleep,
} from './helpers.js';

useMsw();
const delays = useRecordedSleep();

const PAGE = {
  currentPage: 1,
  itemsPerPage: 10,
  totalItems: 0,
  totalPages: 0,
  hasNextPage: false,
  hasPreviousPage: false,
};

/** Answers every API path with a body of the right shape, recording each request. */
function answerEverything(): Captured[] {
  const seen: Captured[] = [];
  server.use(
    http.all(`${BASE_URL}/*`, async ({ request }) => {
      seen.push(await capture(request));
      const path = new URL(request.url).pathname;
      if (request.method === 'DELETE') return new HttpResponse(null, { status: 204 });
      if (path === '/v1/partners/merchant' && request.method === 'GET')
        return reply({ merchants: [], pagination: PAGE });
      if (path === '/v1/partners/events') return reply({ events: [], pagination: PAGE });
      if (path === '/v1/partners/webhooks' && request.method === 'GET')
        return reply({ webhooks: [], pagination: PAGE });
      if (path.endsWith('/deliveries')) return reply({ deliveries: [], pagination: PAGE });
      if (path === '/v1/collect') return reply({ accepted: 1 }, { status: 202 });
      return reply({});
    }),
  );
  return seen;
}

/** Every method that sends a request, called with `options` (the streams have their own options). */
const METHODS: Array<
  [string, 'GET' | 'POST' | 'DELETE', (client: PartnerClient, options: RequestOptions) => PromiseLike<unknown>]
> = [
  ['merchants.list', 'GET', (c, o) => c.merchants.list({}, o)],
  ['merchants.create', 'POST', (c, o) => c.merchants.create({ name: 'a' }, o)],
  ['tags.generate', 'POST', (c, o) => c.tags.generate({ merchantId: 'm', domain: 'd.com' }, o)],
  ['tags.verify', 'POST', (c, o) => c.tags.verify({ tagId: 't', subdomain: 'x.d.com' }, o)],
  ['tags.snippet', 'GET', (c, o) => c.tags.snippet('t', o)],
  ['tags.retrieve', 'GET', (c, o) => c.tags.retrieve('t', o)],
  ['events.list', 'GET', (c, o) => c.events.list({ merchantId: 'm' }, o)],
  ['events.send', 'POST', (c, o) => c.events.send({ tagId: 't', events: [{ event_name: 'x' }] }, o)],
  ['webhooks.create', 'POST', (c, o) => c.webhooks.create({ url: 'https://h.example' }, o)],
  ['webhooks.list', 'GET', (c, o) => c.webhooks.list({}, o)],
  ['webhooks.delete', 'DELETE', (c, o) => c.webhooks.delete('w', o)],
  ['webhooks.rotateSecret', 'POST', (c, o) => c.webhooks.rotateSecret('w', o)],
  ['webhooks.test', 'POST', (c, o) => c.webhooks.test('w', o)],
  ['webhooks.deliveries.list', 'GET', (c, o) => c.webhooks.deliveries.list('w', {}, o)],
  ['webhooks.deliveries.retry', 'POST', (c, o) => c.webhooks.deliveries.retry('w', 'd', o)],
];

describe('per-request options on every method', () => {
  it.each(METHODS)(
    '%s: headers merged over the client’s (null removes one); idempotencyKey on POST',
    async (name, method, call) => {
      const seen = answerEverything();
      const client = makeClient({ headers: { 'x-team': 'client', 'x-trace': 'client', 'x-drop': 'client' } });
      await call(client, {
        headers: { 'x-trace': `call-${name}`, 'x-drop': null },
        idempotencyKey: `key-${name}`,
      });
      expect(seen).toHaveLength(1);
      const [request] = seen as [Captured];
      expect(request.method).toBe(method);
      expect(request.headers.get('x-team')).toBe('client');
      expect(request.headers.get('x-trace')).toBe(`call-${name}`);
      expect(request.headers.has('x-drop')).toBe(false);
      expect(request.headers.get('authorization')).toBe('Bearer mp_live_test_key');
      expect(request.headers.get('idempotency-key')).toBe(method === 'POST' ? `key-${name}` : null);
    },
  );

  it.each(METHODS)('%s: maxRetries overrides the client’s, both ways', async (_name, _method, call) => {
    let calls = 0;
    server.use(
      http.all(`${BASE_URL}/*`, () => {
        calls++;
        return reply({ message: 'down', code: 'DATABASE_ERROR' }, { status: 500 });
      }),
    );
    await expect(call(makeClient({ maxRetries: 3 }), { maxRetries: 0 })).rejects.toBeInstanceOf(InternalServerError);
    expect(calls).toBe(1);
    calls = 0;
    await expect(call(makeClient({ maxRetries: 0 }), { maxRetries: 2 })).rejects.toBeInstanceOf(InternalServerError);
    expect(calls).toBe(3);
  });

  it.each(METHODS)(
    '%s: an aborted signal sends nothing and rejects with APIUserAbortError',
    async (_name, _method, call) => {
      const seen = answerEverything();
      await expect(call(makeClient(), { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(APIUserAbortError);
      expect(seen).toHaveLength(0);
    },
  );
});

describe('per-request options over the client defaults', () => {
  const slow = (ms: number) => {
    let calls = 0;
    server.use(
      http.get(`${BASE_URL}/v1/partners/tag/t`, async () => {
        calls++;
        await delay(ms);
        return reply({ tagId: 't' });
      }),
    );
    return () => calls;
  };

  it('timeout: a shorter per-call timeout fails a call the client’s would let through', async () => {
    const calls = slow(300);
    const error = await makeClient({ timeout: 60_000 })
      .tags.retrieve('t', { timeout: 30, maxRetries: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect((error as Error).message).toBe('Request timed out after 30 ms.');
    expect(calls()).toBe(2);
  });

  it('timeout: a longer per-call timeout lets through a call the client’s would fail', async () => {
    slow(100);
    const client = makeClient({ timeout: 20, maxRetries: 0 });
    await expect(client.tags.retrieve('t')).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    await expect(client.tags.retrieve('t', { timeout: 5_000 })).resolves.toEqual({ tagId: 't' });
  });

  it('signal: aborting mid-request rejects at once, is not retried, and works with withResponse()', async () => {
    const calls = slow(2_000);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 30);
    const error = await makeClient({ maxRetries: 5 })
      .tags.retrieve('t', { signal: controller.signal })
      .withResponse()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(calls()).toBe(1);
    expect(delays).toEqual([]);
  });

  it('idempotencyKey: made once per call when not given, the same on every attempt', async () => {
    const keys: (string | null)[] = [];
    let calls = 0;
    server.use(
      http.post(`${BASE_URL}/v1/partners/merchant`, ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        calls++;
        return calls % 2 === 1
          ? reply({ message: 'busy', code: 'SERVICE_UNAVAILABLE' }, { status: 503 })
          : reply({ merchantId: 'm' }, { status: 201 });
      }),
    );
    const client = makeClient();
    await client.merchants.create({ name: 'a' });
    await client.merchants.create({ name: 'a' }).withResponse();
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(UUID_V4);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toMatch(UUID_V4);
    expect(keys[3]).toBe(keys[2]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('idempotencyKey: a per-call key beats a client default Idempotency-Key header; a per-call header beats both', async () => {
    const keys: (string | null)[] = [];
    server.use(
      http.post(`${BASE_URL}/v1/partners/merchant`, ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        return reply({ merchantId: 'm' }, { status: 201 });
      }),
    );
    const client = makeClient({ headers: { 'Idempotency-Key': 'from-client' } });
    await client.merchants.create({ name: 'a' }, { idempotencyKey: 'from-call' });
    await client.merchants.create(
      { name: 'a' },
      { idempotencyKey: 'from-call', headers: { 'Idempotency-Key': 'hdr' } },
    );
    expect(keys).toEqual(['from-call', 'hdr']);
  });

  it('the options of one call leave the client and other calls alone', async () => {
    const seen = answerEverything();
    const client = makeClient({ headers: { 'x-trace': 'client' } });
    await client.tags.retrieve('t', { headers: { 'x-trace': 'once' } });
    await client.tags.retrieve('t');
    expect(seen.map((r) => r.headers.get('x-trace'))).toEqual(['once', 'client']);
  });
});

describe('the streams take their per-call options too (timeout: the wait for the response head)', () => {
  const slowHead = (path: string, body: string, contentType: string) => {
    const seen: Captured[] = [];
    server.use(
      http.get(`${BASE_URL}${path}`, async ({ request }) => {
        seen.push(await capture(request));
        await delay(300);
        return new HttpResponse(body, { headers: { 'content-type': contentType } });
      }),
    );
    return seen;
  };
  const NDJSON = '{"complete":true,"count":0,"cursor":null}\n';

  it('events.export: a per-call timeout beats the client’s, both ways; headers are sent', async () => {
    const seen = slowHead('/v1/partners/events/export', NDJSON, 'application/x-ndjson');
    // The longer one first: msw holds a later request to a path whose aborted one is still in its handler.
    // (.raw(): iterating an export through msw does not end, whatever the options; the real server's
    // export is iterated in integration.test.ts.)
    const response = await makeClient({ timeout: 30 })
      .events.export({ merchantId: 'm' }, { timeout: 5_000, headers: { 'x-trace': 'export' } })
      .raw();
    expect(await response.text()).toBe(NDJSON);
    expect(seen.at(-1)?.headers.get('x-trace')).toBe('export');
    const error = await makeClient({ timeout: 60_000 })
      .events.export({ merchantId: 'm' }, { timeout: 30 })
      .raw()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect((error as Error).message).toBe('Request timed out after 30 ms.');
  });

  it('events.stream: a per-call timeout fails each connection (the client’s would wait 60 s), maxRetries ends it', async () => {
    const seen = slowHead('/v1/partners/events/stream', '', 'text/event-stream');
    const stream = makeClient({ timeout: 60_000 }).events.stream(
      { merchantId: 'm' },
      { timeout: 30, maxRetries: 1, headers: { 'x-trace': 'stream' } },
    );
    const started = Date.now();
    const error = await (async () => {
      for await (const _ of stream) expect.fail('no events');
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as Error).message).toBe('The event stream failed 2 times in a row; giving up.');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen[0]?.headers.get('x-trace')).toBe('stream');
  });
});
