// Issue 35: per-request options `{ signal, timeout, maxRetries, idempotencyKey, headers }` on every
// method of both clients (lists, the stream and the export included), as the last argument, merged
// over the client's defaults; the idempotency key is made once per logical POST call when not given.
import { delay, HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIUserAbortError,
  type HeadersRecord,
  MerchantClient,
  type MerchantClientOptions,
  Page,
  type PagePromise,
  type PartnerClient,
  PartnerError,
  type RequestOptions,
} from '../src/index.js';
import {
  API_KEY,
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

/** The list endpoints (answered over two pages) by path, with the body key of their items. */
const LISTS: Record<string, string> = {
  '/v1/partners/merchant': 'merchants',
  '/v1/partners/events': 'events',
  '/v1/partners/webhooks': 'webhooks',
};
const ID_OF: Record<string, string> = {
  merchants: 'merchantId',
  events: 'id',
  webhooks: 'webhookId',
  deliveries: 'deliveryId',
};

/** A list page: one item, and a second page after the first. */
function listPage(itemsKey: string, page: number): Response {
  const pagination = {
    currentPage: page,
    itemsPerPage: 1,
    totalItems: 2,
    totalPages: 2,
    hasNextPage: page === 1,
    hasPreviousPage: page === 2,
  };
  return reply({ [itemsKey]: [{ [ID_OF[itemsKey] as string]: `item-${page}` }], pagination });
}

const SSE =
  'id: 1\nevent: event\ndata: {"id":"e1","seq":1,"muid":"u","event_name":"x","event_time":"2026-11-01T00:00:00.000Z","raw_data":"{}"}\n\n';
const NDJSON = '{"complete":true,"count":0,"cursor":null}\n';

/** The first page of a list (a GET of a list path without `page` or with page 1); null for any other request. */
function firstPage(request: Request): Response | null {
  const url = new URL(request.url);
  const itemsKey = url.pathname.endsWith('/deliveries') ? 'deliveries' : LISTS[url.pathname];
  if (request.method !== 'GET' || !itemsKey || Number(url.searchParams.get('page') ?? 1) !== 1) return null;
  return listPage(itemsKey, 1);
}

/** Answers every API path with a body of the right shape (lists over two pages), recording each request. */
function answerEverything(): Captured[] {
  const seen: Captured[] = [];
  server.use(
    http.all(`${BASE_URL}/*`, async ({ request }) => {
      seen.push(await capture(request));
      const url = new URL(request.url);
      const path = url.pathname;
      const page = Number(url.searchParams.get('page') ?? 1);
      if (request.method === 'DELETE') return new HttpResponse(null, { status: 204 });
      if (request.method === 'GET' && LISTS[path]) return listPage(LISTS[path] as string, page);
      if (path.endsWith('/deliveries')) return listPage('deliveries', page);
      if (path.endsWith('/events/stream'))
        return new HttpResponse(SSE, { headers: { 'content-type': 'text/event-stream' } });
      if (path.endsWith('/events/export'))
        return new HttpResponse(NDJSON, { headers: { 'content-type': 'application/x-ndjson' } });
      if (path === '/v1/collect') return reply({ accepted: 1 }, { status: 202 });
      return reply({});
    }),
  );
  return seen;
}

/** Reads a stream's first event, then leaves it (which closes the connection). */
async function firstOf(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  for await (const item of stream) return [item];
  return [];
}

type Call<C> = (client: C, options: RequestOptions) => Promise<unknown>;
const all = (page: PagePromise<unknown>) => page.toArray({ limit: Number.POSITIVE_INFINITY });

/**
 * Every method of `PartnerClient` that sends requests, driven to its end with `options`: a list
 * through every page, a stream to its first event, an export through its body. The test below
 * checks this table against the methods the client has, so a new method fails until it is here
 * (and then until it forwards each option).
 */
const CALLS: Record<string, Call<PartnerClient>> = {
  'merchants.list': (c, o) => all(c.merchants.list({}, o)),
  'merchants.create': (c, o) => c.merchants.create({ name: 'a' }, o),
  'merchants.retrieve': (c, o) => c.merchants.retrieve('m', o),
  'merchants.update': (c, o) => c.merchants.update('m', { name: 'b' }, o),
  'merchants.delete': (c, o) => c.merchants.delete('m', o),
  'merchants.sessions.create': (c, o) =>
    c.merchants.sessions.create({ merchantId: 'm', allowedOrigins: ['https://shop.example'] }, o),
  'merchants.goals.create': (c, o) => c.merchants.goals.create({ merchantId: 'm', name: 'g', eventName: 'SignUp' }, o),
  'merchants.goals.list': (c, o) => c.merchants.goals.list('m', o),
  'merchants.goals.delete': (c, o) => c.merchants.goals.delete('m', 'g', o),
  'tags.generate': (c, o) => c.tags.generate({ merchantId: 'm', domain: 'd.com' }, o),
  'tags.verify': (c, o) => c.tags.verify({ tagId: 't', subdomain: 'x.d.com' }, o),
  'tags.snippet': (c, o) => c.tags.snippet('t', o),
  'tags.retrieve': (c, o) => c.tags.retrieve('t', o),
  'tags.delete': (c, o) => c.tags.delete('t', o),
  'tags.update': (c, o) => c.tags.update('t', { consentMode: 'none' }, o),
  'events.list': (c, o) => all(c.events.list({ merchantId: 'm' }, o)),
  'events.send': (c, o) => c.events.send({ tagId: 't', events: [{ event_name: 'x' }] }, o),
  'events.stream': (c, o) => firstOf(c.events.stream({ merchantId: 'm' }, o)),
  // The export's body read whole (an export iterated through msw never ends: integration.test.ts
  // iterates the real server's; iteration opens it through this same raw()).
  'events.export': (c, o) =>
    c.events
      .export({ merchantId: 'm' }, o)
      .raw()
      .then((response) => response.text()),
  'webhooks.create': (c, o) => c.webhooks.create({ url: 'https://h.example' }, o),
  'webhooks.list': (c, o) => all(c.webhooks.list({}, o)),
  'webhooks.delete': (c, o) => c.webhooks.delete('w', o),
  'webhooks.rotateSecret': (c, o) => c.webhooks.rotateSecret('w', o),
  'webhooks.test': (c, o) => c.webhooks.test('w', o),
  'webhooks.deliveries.list': (c, o) => all(c.webhooks.deliveries.list('w', {}, o)),
  'webhooks.deliveries.retry': (c, o) => c.webhooks.deliveries.retry('w', 'd', o),
  'stats.summary': (c, o) => c.stats.summary(STATS, o),
  'stats.timeseries': (c, o) => c.stats.timeseries(STATS, o),
  'stats.breakdown': (c, o) => c.stats.breakdown({ ...STATS, dimension: 'path' }, o),
  'stats.realtime': (c, o) => c.stats.realtime({ merchantId: STATS.merchantId }, o),
  'stats.funnel': (c, o) => c.stats.funnel({ ...STATS, steps: ['g1', 'g2'] }, o),
  'stats.attribution': (c, o) => c.stats.attribution({ ...STATS, model: 'first_touch', dimension: 'channel' }, o),
  'settings.retrieve': (c, o) => c.settings.retrieve(o),
  'settings.update': (c, o) => c.settings.update({ defaultRetentionDays: 30 }, o),
  'erasures.create': (c, o) => c.erasures.create({ muid: 'visitor-1' }, o),
  'erasures.retrieve': (c, o) => c.erasures.retrieve('e', o),
  'testHelpers.triggerTag': (c, o) => c.testHelpers.triggerTag('t', { event: 'tag.disconnected' }, o),
  'testHelpers.triggerStats': (c, o) => c.testHelpers.triggerStats('m', { event: 'stats.digest' }, o),
};
/** Methods that send nothing: `unwrap` verifies a delivery locally. */
const NO_REQUEST = ['webhooks.unwrap'];

/** The same for `MerchantClient` (a browser page's, with a merchant session). */
const MERCHANT_CALLS: Record<string, Call<MerchantClient>> = {
  'stats.summary': (c, o) => c.stats.summary(STATS, o),
  'stats.timeseries': (c, o) => c.stats.timeseries(STATS, o),
  'stats.breakdown': (c, o) => c.stats.breakdown({ ...STATS, dimension: 'path' }, o),
  'stats.realtime': (c, o) => c.stats.realtime({ merchantId: STATS.merchantId }, o),
  'stats.funnel': (c, o) => c.stats.funnel({ ...STATS, steps: ['g1', 'g2'] }, o),
  'stats.attribution': (c, o) => c.stats.attribution({ ...STATS, model: 'first_touch', dimension: 'channel' }, o),
  'tags.retrieve': (c, o) => c.tags.retrieve('t', o),
};
const STATS = { merchantId: 'm', startDate: '2026-11-01', endDate: '2026-11-07' };

/** Every method of a client's resources (`merchants.sessions.create`...), read from their classes. */
function methodsOf(root: object, prefix = ''): string[] {
  const names: string[] = [];
  for (const [key, value] of Object.entries(root)) {
    if (typeof value !== 'object' || value === null) continue;
    const proto = Object.getPrototypeOf(value) as object;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const { value: member } = Object.getOwnPropertyDescriptor(proto, name) ?? {};
      if (name !== 'constructor' && typeof member === 'function') names.push(`${prefix}${key}.${name}`);
    }
    names.push(...methodsOf(value, `${prefix}${key}.`));
  }
  return names.sort();
}

const makeMerchantClient = (options: Partial<MerchantClientOptions> = {}) =>
  new MerchantClient({ baseURL: BASE_URL, sessionToken: 'ms_session', sleep: async () => undefined, ...options });

/** Both clients' tables as one list of rows: `[client, method, call, makeClient]`. */
type Row = [string, string, Call<never>, (options?: { maxRetries?: number; headers?: HeadersRecord }) => never];
const ROWS: Row[] = [
  ...Object.entries(CALLS).map(
    ([name, call]): Row => ['PartnerClient', name, call as Call<never>, makeClient as never],
  ),
  ...Object.entries(MERCHANT_CALLS).map(
    ([name, call]): Row => ['MerchantClient', name, call as Call<never>, makeMerchantClient as never],
  ),
];

/** Holds a request until the client gives up on it (its signal aborts) or `ms` passed. */
const hold = (request: Request, ms: number) =>
  Promise.race([delay(ms), new Promise((resolve) => request.signal.addEventListener('abort', resolve))]);

/** What a call settled with, and how long it took. */
async function settle(run: () => Promise<unknown>): Promise<{ error: unknown; value: unknown; ms: number }> {
  const started = Date.now();
  try {
    const value = await run();
    return { error: undefined, value, ms: Date.now() - started };
  } catch (error) {
    return { error, value: undefined, ms: Date.now() - started };
  }
}

/** Lists iterated page by page (a merchant's goals, at most 100, come in one answer). */
const paged = (name: string) => name.endsWith('.list') && name !== 'merchants.goals.list';

describe('per-request options on every method', () => {
  it('the tables name every method of both clients (a new method must be added, with its options)', () => {
    const partner = makeClient();
    const missing = 'a method missing here: add it to CALLS / MERCHANT_CALLS (test/request-options.test.ts)';
    expect(
      methodsOf(partner).filter((name) => !NO_REQUEST.includes(name)),
      missing,
    ).toEqual(Object.keys(CALLS).sort());
    expect(methodsOf(makeMerchantClient()), missing).toEqual(Object.keys(MERCHANT_CALLS).sort());
  });

  it.each(ROWS)('%s %s: headers and idempotencyKey reach every request of the call', async (kind, name, call, make) => {
    const seen = answerEverything();
    const client = make({ headers: { 'x-team': 'client', 'x-drop': 'client' } });
    await call(client as never, {
      headers: { 'x-trace': `call-${name}`, 'x-drop': null },
      idempotencyKey: `key-${name}`,
    });
    // A list is iterated through its two pages: the options go with each.
    expect(seen.length).toBe(paged(name) ? 2 : 1);
    for (const request of seen) {
      expect(request.headers.get('x-trace')).toBe(`call-${name}`);
      expect(request.headers.get('x-team')).toBe('client');
      expect(request.headers.has('x-drop')).toBe(false);
      expect(request.headers.get('idempotency-key')).toBe(`key-${name}`);
      expect(request.headers.get('authorization')).toBe(
        kind === 'MerchantClient' ? 'Bearer ms_session' : `Bearer ${API_KEY}`,
      );
    }
  });

  // A list's first page is answered; the options are then checked on the page its iteration asks
  // for next (they go with every page, not only with the list call's first request).
  it.each(ROWS)('%s %s: maxRetries overrides the client’s, both ways', async (_kind, name, call, make) => {
    let calls = 0;
    server.use(
      http.all(`${BASE_URL}/*`, ({ request }) => {
        calls++;
        return firstPage(request) ?? reply({ message: 'busy', code: 'SERVICE_UNAVAILABLE' }, { status: 503 });
      }),
    );
    const pages = paged(name) ? 1 : 0;
    const once = await settle(() => call(make({ maxRetries: 3 }) as never, { maxRetries: 0 }));
    expect(once.error).toBeInstanceOf(PartnerError);
    expect(calls).toBe(pages + 1);
    calls = 0;
    const thrice = await settle(() => call(make({ maxRetries: 0 }) as never, { maxRetries: 2 }));
    expect(thrice.error).toBeInstanceOf(PartnerError);
    expect(calls).toBe(pages + 3);
  });

  it.each(ROWS)('%s %s: the signal aborts the call in flight, without a retry', async (_kind, name, call, make) => {
    const seen: string[] = [];
    server.use(
      http.all(`${BASE_URL}/*`, async ({ request }) => {
        seen.push(request.url);
        const answered = firstPage(request);
        if (answered) return answered;
        await hold(request, 3_000);
        return reply({ message: 'late', code: 'SERVICE_UNAVAILABLE' }, { status: 503 });
      }),
    );
    const requests = paged(name) ? 2 : 1;
    const controller = new AbortController();
    const outcome = settle(() => call(make({ maxRetries: 5 }) as never, { signal: controller.signal }));
    await expect.poll(() => seen.length, { timeout: 2_000, interval: 5 }).toBe(requests);
    controller.abort();
    const { error, value, ms } = await outcome;
    expect(ms).toBeLessThan(1_500);
    // A stream ends quietly when its signal aborts; every other call rejects.
    if (name === 'events.stream') expect([error, value]).toEqual([undefined, []]);
    else expect(error).toBeInstanceOf(APIUserAbortError);
    expect(seen).toHaveLength(requests);
  });

  it.each(ROWS)('%s %s: the timeout applies (the client’s is a minute)', async (_kind, _name, call, make) => {
    server.use(
      http.all(`${BASE_URL}/*`, async ({ request }) => {
        const answered = firstPage(request);
        if (answered) return answered;
        await hold(request, 1_000);
        return reply({});
      }),
    );
    const { error, ms } = await settle(() => call(make({ maxRetries: 0 }) as never, { timeout: 40, maxRetries: 0 }));
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(ms).toBeLessThan(800);
  });
});

/**
 * The methods of a list's `Page` that request pages (`hasNextPage` asks nothing; `for await` takes
 * no arguments: it runs with the list call's options), each driven to its end with `options`.
 */
const PAGE_CALLS: Record<string, (page: Page<unknown>, options: RequestOptions) => Promise<unknown>> = {
  getNextPage: (p, o) => p.getNextPage(o),
  iterPages: async (p, o) => {
    for await (const _ of p.iterPages(o));
  },
  toArray: (p, o) => p.toArray({ limit: Number.POSITIVE_INFINITY, ...o }),
};

describe('per-request options on the methods of a page', () => {
  it('the table names every method of Page that requests pages', () => {
    const names = Object.getOwnPropertyNames(Page.prototype).filter(
      (name) =>
        name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(Page.prototype, name)?.value === 'function',
    );
    expect(names.filter((name) => name !== 'hasNextPage').sort()).toEqual(Object.keys(PAGE_CALLS).sort());
  });

  /** The first page of merchants (fetched with the list call's options only), then `call` on it. */
  const fromFirstPage = async (call: (page: Page<unknown>) => Promise<unknown>, client = makeClient()) =>
    call(await client.merchants.list({}, { headers: { 'x-list': 'list' } }));

  it.each(Object.entries(PAGE_CALLS))(
    '%s: its options go with the next page, over the list call’s',
    async (_name, call) => {
      const seen = answerEverything();
      await fromFirstPage((page) =>
        call(page, { headers: { 'x-trace': 'page', 'x-list': null }, idempotencyKey: 'key-page' }),
      );
      expect(seen).toHaveLength(2);
      const [first, next] = seen as [Captured, Captured];
      expect([first.headers.get('x-list'), first.headers.get('x-trace')]).toEqual(['list', null]);
      expect([next.headers.get('x-list'), next.headers.get('x-trace')]).toEqual([null, 'page']);
      expect(next.headers.get('idempotency-key')).toBe('key-page');
    },
  );

  it.each(Object.entries(PAGE_CALLS))(
    '%s: maxRetries, signal and timeout apply to the next page',
    async (_name, call) => {
      let calls = 0;
      server.use(
        http.all(`${BASE_URL}/*`, async ({ request }) => {
          calls++;
          const answered = firstPage(request);
          if (answered) return answered;
          if (request.headers.get('x-slow')) await hold(request, 1_000);
          return reply({ message: 'busy', code: 'SERVICE_UNAVAILABLE' }, { status: 503 });
        }),
      );
      const client = makeClient({ maxRetries: 0 });
      const retried = await settle(() => fromFirstPage((page) => call(page, { maxRetries: 2 }), client));
      expect(retried.error).toBeInstanceOf(PartnerError);
      expect(calls).toBe(1 + 3);
      const slow = { headers: { 'x-slow': '1' } };
      const timedOut = await settle(() => fromFirstPage((page) => call(page, { ...slow, timeout: 40 }), client));
      expect(timedOut.error).toBeInstanceOf(APIConnectionTimeoutError);
      expect(timedOut.ms).toBeLessThan(800);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const aborted = await settle(() =>
        fromFirstPage((page) => call(page, { ...slow, signal: controller.signal }), client),
      );
      expect(aborted.error).toBeInstanceOf(APIUserAbortError);
      expect(aborted.ms).toBeLessThan(800);
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
