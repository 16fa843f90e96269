import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { Page, PagePromise, type PartnerClient, PartnerError, type TrackingEvent } from '../src/index.js';
import { BASE_URL, type Captured, capture, makeClient, reply, server, useMsw, useRecordedSleep } from './helpers.js';

useMsw();
useRecordedSleep();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';

function event(n: number): TrackingEvent {
  return {
    id: `evt_${n}`,
    muid: `u_${n % 3}`,
    event_name: n % 2 ? 'Purchase' : 'PageView',
    event_time: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
    raw_data: JSON.stringify({ n }),
    consent: 'not_required',
  };
}

type Envelope = 'primary' | 'alternative' | 'no-flags' | 'none';

function pagination(envelope: Envelope, page: number, limit: number, total: number): unknown {
  const totalPages = Math.ceil(total / limit);
  switch (envelope) {
    case 'primary':
      return {
        currentPage: page,
        itemsPerPage: limit,
        totalItems: total,
        totalPages,
        hasNextPage: page < totalPages,
        hasPreviousPage: page > 1,
      };
    case 'alternative':
      return { page, limit, total, totalPages };
    case 'no-flags':
      return { currentPage: page, itemsPerPage: limit, total };
    case 'none':
      return undefined;
  }
}

/** Serves `items` as pages of the list endpoint, honouring page and limit, in the given envelope. */
function serveEvents(items: TrackingEvent[], envelope: Envelope, opts: { key?: string; defaultLimit?: number } = {}) {
  const seen: Captured[] = [];
  server.use(
    http.get(`${BASE_URL}/v1/partners/events`, async ({ request }) => {
      const req = await capture(request);
      seen.push(req);
      const page = Number(req.url.searchParams.get('page') ?? 1);
      const limit = Number(req.url.searchParams.get('limit') ?? opts.defaultLimit ?? 12);
      const slice = items.slice((page - 1) * limit, page * limit);
      const body: Record<string, unknown> = { [opts.key ?? 'events']: slice };
      const p = pagination(envelope, page, limit, items.length);
      if (p !== undefined) body.pagination = p;
      return reply(body);
    }),
  );
  return seen;
}

const all = Array.from({ length: 7 }, (_, i) => event(i + 1));

/** Every list method of the client, with its path, the body key of its items and their id field. */
const LIST_METHODS: Array<[string, string, string, string, (c: PartnerClient) => PagePromise<unknown>]> = [
  ['merchants.list', '/v1/partners/merchant', 'merchants', 'merchantId', (c) => c.merchants.list({ limit: 1 })],
  ['events.list', '/v1/partners/events', 'events', 'id', (c) => c.events.list({ merchantId: MERCHANT_ID, limit: 1 })],
  ['webhooks.list', '/v1/partners/webhooks', 'webhooks', 'webhookId', (c) => c.webhooks.list({ limit: 1 })],
  [
    'webhooks.deliveries.list',
    '/v1/partners/webhooks/w1/deliveries',
    'deliveries',
    'deliveryId',
    (c) => c.webhooks.deliveries.list('w1', { limit: 1 }),
  ],
];

describe('one pagination shape for every list method', () => {
  it.each(LIST_METHODS)('%s', async (_, path, key, idField, list) => {
    server.use(
      http.get(`${BASE_URL}${path}`, ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
        const pagination = { currentPage: page, itemsPerPage: 1, totalItems: 2, totalPages: 2 };
        return reply({ [key]: [{ [idField]: `item-${page}` }], pagination });
      }),
    );
    const client = makeClient({ prefetchPages: false });
    const ids = (items: unknown[]) => items.map((item) => (item as Record<string, string>)[idField]);
    // The call is a promise of the first page...
    const promise = list(client);
    expect(promise).toBeInstanceOf(PagePromise);
    const first = await promise;
    expect(first).toBeInstanceOf(Page);
    expect([ids(first.data), first.hasNextPage()]).toEqual([['item-1'], true]);
    const second = await first.getNextPage();
    expect([ids(second.data), second.hasNextPage()]).toEqual([['item-2'], false]);
    // ...that is also async-iterable over every item of every page.
    const items: unknown[] = [];
    for await (const item of list(client)) items.push(item);
    expect(ids(items)).toEqual(['item-1', 'item-2']);
    const pages: unknown[][] = [];
    for await (const page of first.iterPages()) pages.push(ids(page.data));
    expect(pages).toEqual([['item-1'], ['item-2']]);
    expect(ids(await list(client).toArray({ limit: 10 }))).toEqual(['item-1', 'item-2']);
  });
});

describe('pagination', () => {
  it.each<Envelope>(['primary', 'alternative', 'no-flags', 'none'])(
    'iterates every item across pages with the %s envelope',
    async (envelope) => {
      const seen = serveEvents(all, envelope);
      const got: TrackingEvent[] = [];
      for await (const e of makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 })) got.push(e);
      expect(got.map((e) => e.id)).toEqual(all.map((e) => e.id));
      // 7 items by 3: pages 1, 2, 3 (the short third page ends it); no request for page 4.
      expect(seen.map((r) => r.url.searchParams.get('page'))).toEqual([null, '2', '3']);
    },
  );

  it('normalises both envelopes into the same pagination object', async () => {
    serveEvents(all, 'primary');
    const primary = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 });
    server.resetHandlers();
    serveEvents(all, 'alternative');
    const alternative = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 });
    const expected = {
      currentPage: 1,
      itemsPerPage: 3,
      totalItems: 7,
      total: 7,
      totalPages: 3,
      totalsKnown: true,
      hasNextPage: true,
      hasPreviousPage: false,
      nextCursor: null,
    };
    expect(primary.pagination).toEqual(expected);
    expect(alternative.pagination).toEqual(expected);
  });

  it('derives hasNextPage from totals when the flag is missing', async () => {
    serveEvents(all, 'no-flags');
    const first = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 4 });
    expect(first.pagination.totalPages).toBe(2);
    expect(first.hasNextPage()).toBe(true);
    const second = await first.getNextPage();
    expect(second.data.map((e) => e.id)).toEqual(['evt_5', 'evt_6', 'evt_7']);
    expect(second.hasNextPage()).toBe(false);
    expect(second.pagination.hasPreviousPage).toBe(true);
  });

  it('without a pagination object, a full page continues and a short page is the end', async () => {
    const seen = serveEvents(all, 'none', { defaultLimit: 12 });
    // No limit given: the server default (12) is assumed, so 7 items is a short, final page.
    const page = await makeClient().events.list({ merchantId: MERCHANT_ID });
    expect(page.data).toHaveLength(7);
    // No totals stated: the count known from the pages so far (exact here: the last page).
    expect(page.pagination).toMatchObject({ totalItems: 7, total: 7, totalPages: 1, totalsKnown: false });
    expect(page.hasNextPage()).toBe(false);
    expect(seen).toHaveLength(1);
  });

  it('carries every filter and per-call option to later pages, changing only page', async () => {
    const seen = serveEvents(all, 'primary');
    const client = makeClient();
    const params = {
      merchantId: MERCHANT_ID,
      limit: 2,
      sortBy: 'event_time',
      sortOrder: 'asc',
      events: ['Purchase', 'PageView'],
      startDate: new Date('2026-01-01T00:00:00Z'),
      endDate: '2026-01-02T00:00:00Z',
    } as const;
    const got = await client.events.list(params, { headers: { 'X-Trace': 'trace-1' } }).toArray({ limit: 100 });
    expect(got).toHaveLength(7);
    expect(seen).toHaveLength(4);
    const [first, ...rest] = seen.map((r) => Object.fromEntries(r.url.searchParams));
    expect(first).toEqual({
      merchantId: MERCHANT_ID,
      limit: '2',
      sortBy: 'event_time',
      sortOrder: 'asc',
      events: 'Purchase,PageView',
      startDate: '2026-01-01T00:00:00.000Z',
      endDate: '2026-01-02T00:00:00Z',
    });
    rest.forEach((query, i) => {
      expect(query).toEqual({ ...first, page: String(i + 2) });
    });
    for (const r of seen) expect(r.headers.get('x-trace')).toBe('trace-1');
  });

  it('continues from the requested start page', async () => {
    const seen = serveEvents(all, 'primary');
    const got = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3, page: 2 }).toArray({ limit: 50 });
    expect(got.map((e) => e.id)).toEqual(['evt_4', 'evt_5', 'evt_6', 'evt_7']);
    expect(seen.map((r) => r.url.searchParams.get('page'))).toEqual(['2', '3']);
  });

  it('reads merchants from `merchants` and tolerates `data`', async () => {
    const merchant = (n: number) => ({
      merchantId: `m${n}`,
      name: `M${n}`,
      createdAt: '2026-01-01T00:00:00.000Z',
      tags: [],
    });
    server.use(
      http.get(`${BASE_URL}/v1/partners/merchant`, ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
        const pag = { currentPage: page, itemsPerPage: 2, totalItems: 4, totalPages: 2 };
        // Page 1 uses the documented key, page 2 the generic `data` key.
        return reply(
          page === 1
            ? { merchants: [merchant(1), merchant(2)], pagination: pag }
            : { data: [merchant(3)], pagination: pag },
        );
      }),
    );
    const names: string[] = [];
    for await (const m of makeClient().merchants.list({ limit: 2 })) names.push(m.name);
    expect(names).toEqual(['M1', 'M2', 'M3']);
  });

  it('ends on an empty page even when the server claims more pages', async () => {
    const seen: string[] = [];
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
        seen.push(String(page));
        const events = page === 1 ? [event(1), event(2)] : [];
        return reply({ events, pagination: { currentPage: page, itemsPerPage: 2, hasNextPage: true } });
      }),
    );
    const got = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 2 }).toArray({ limit: 1000 });
    expect(got.map((e) => e.id)).toEqual(['evt_1', 'evt_2']);
    expect(seen).toEqual(['1', '2']);
  });

  it('ends on a page that repeats the previous one (a server ignoring `page`)', async () => {
    let calls = 0;
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, () => {
        calls++;
        return reply({
          events: [event(1), event(2)],
          pagination: { currentPage: 1, itemsPerPage: 2, totalItems: 100, totalPages: 50, hasNextPage: true },
        });
      }),
    );
    const first = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 2 });
    const got: string[] = [];
    for await (const e of first) got.push(e.id);
    expect(got).toEqual(['evt_1', 'evt_2']);
    expect(calls).toBe(2);
    const second = await first.getNextPage();
    expect(second.hasNextPage()).toBe(false);
    const pages: Page<TrackingEvent>[] = [];
    for await (const p of second.iterPages()) pages.push(p);
    expect(pages).toEqual([]);
  });

  it('iterPages yields pages; getNextPage throws past the end', async () => {
    serveEvents(all, 'primary');
    const first = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 });
    const sizes: number[] = [];
    let last: Page<TrackingEvent> | undefined;
    for await (const p of first.iterPages()) {
      sizes.push(p.data.length);
      last = p;
    }
    expect(sizes).toEqual([3, 3, 1]);
    expect(last?.pagination.currentPage).toBe(3);
    expect(last?.hasNextPage()).toBe(false);
    await expect(last?.getNextPage()).rejects.toBeInstanceOf(PartnerError);
  });

  it('toArray stops at its cap without fetching further pages, and requires a cap', async () => {
    const seen = serveEvents(all, 'primary');
    const page = await makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 });
    expect((await page.toArray({ limit: 4 })).map((e) => e.id)).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_4']);
    expect(seen).toHaveLength(2);
    expect(await page.toArray({ limit: 0 })).toEqual([]);
    // @ts-expect-error the cap is required
    await expect(page.toArray({})).rejects.toThrow(/needs a cap/);
    // @ts-expect-error the options are required
    await expect(page.toArray()).rejects.toThrow(/needs a cap/);
  });

  it('list() returns a PagePromise: awaitable, then-able and iterable', async () => {
    serveEvents(all, 'primary');
    const promise = makeClient().events.list({ merchantId: MERCHANT_ID, limit: 5 });
    expect(promise).toBeInstanceOf(PagePromise);
    expect(Object.prototype.toString.call(promise)).toBe('[object PagePromise]');
    const count = await promise.then((p) => p.data.length);
    expect(count).toBe(5);
    const page = await promise;
    expect(page).toBeInstanceOf(Page);
  });

  it('a failing first page rejects both the promise and the iteration', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, () =>
        HttpResponse.json({ message: 'Merchant not found', code: 'MERCHANT_NOT_FOUND' }, { status: 404 }),
      ),
    );
    const promise = makeClient().events.list({ merchantId: MERCHANT_ID });
    await expect(promise).rejects.toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND' });
    const iterate = async () => {
      for await (const _ of makeClient().events.list({ merchantId: MERCHANT_ID })) {
        // unreachable
      }
    };
    await expect(iterate()).rejects.toMatchObject({ status: 404 });
    await expect(promise.catch((e: unknown) => (e as Error).name)).resolves.toBe('NotFoundError');
  });
});

describe('fetching the next page ahead (prefetchPages)', () => {
  /** Serves `all` by pages of 3, logging each request as `page N` into `log`; `hold` delays a page's answer. */
  function serveLogged(log: string[], hold: (page: number) => Promise<void> = async () => undefined) {
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, async ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
        log.push(`page ${page}`);
        await hold(page);
        const events = all.slice((page - 1) * 3, page * 3);
        return reply({ events, pagination: pagination('primary', page, 3, all.length) });
      }),
    );
  }

  /** A client whose fetch records the signal each request carries. */
  function recordingClient(signals: AbortSignal[], options: Parameters<typeof makeClient>[0] = {}) {
    return makeClient({
      ...options,
      fetch: (input, init) => {
        signals.push(input instanceof Request ? input.signal : (init?.signal ?? new AbortController().signal));
        return fetch(input, init);
      },
    });
  }

  it('asks for the next page while the items of the current one are being used', async () => {
    const log: string[] = [];
    let pageTwoAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      pageTwoAsked = resolve;
    });
    serveLogged(log, async (page) => {
      if (page === 2) pageTwoAsked();
    });
    const got: string[] = [];
    for await (const e of makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 })) {
      got.push(e.id);
      // The loop stays on the first item until page 2 has been asked for: without fetching
      // ahead, that request would only leave after evt_3, and this wait would time out.
      if (e.id === 'evt_1') {
        await Promise.race([
          asked,
          new Promise((_, reject) => setTimeout(() => reject(new Error('page 2 was not asked for')), 2_000)),
        ]);
        log.push('evt_1 used');
      }
    }
    expect(got).toEqual(all.map((e) => e.id));
    expect(log).toEqual(['page 1', 'page 2', 'evt_1 used', 'page 3']);
  });

  it('with prefetchPages: false, a page is asked for only once the items before it are used up', async () => {
    const log: string[] = [];
    serveLogged(log);
    const client = makeClient({ prefetchPages: false });
    for await (const e of client.events.list({ merchantId: MERCHANT_ID, limit: 3 })) log.push(e.id);
    expect(log).toEqual(['page 1', 'evt_1', 'evt_2', 'evt_3', 'page 2', 'evt_4', 'evt_5', 'evt_6', 'page 3', 'evt_7']);
  });

  it('leaving the loop early aborts the page fetched ahead, without an unhandled rejection', async () => {
    const log: string[] = [];
    const signals: AbortSignal[] = [];
    // Page 2 answers only after the loop has ended, so its request is still open when it does.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    serveLogged(log, (page) => (page === 2 ? released : Promise.resolve()));
    const client = recordingClient(signals);
    for await (const e of client.events.list({ merchantId: MERCHANT_ID, limit: 3 })) {
      if (e.id === 'evt_2') break;
    }
    release();
    expect(log).toEqual(['page 1', 'page 2']);
    expect(signals).toHaveLength(2);
    expect(signals[0]?.aborted).toBe(false);
    expect(signals[1]?.aborted).toBe(true);
    // Nothing else is asked for afterwards.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual(['page 1', 'page 2']);
  });

  it('iterPages fetches ahead too, and leaving it early aborts that request', async () => {
    const log: string[] = [];
    const signals: AbortSignal[] = [];
    let pageTwoAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      pageTwoAsked = resolve;
    });
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    serveLogged(log, (page) => {
      if (page !== 2) return Promise.resolve();
      pageTwoAsked();
      return released;
    });
    const first = await recordingClient(signals).events.list({ merchantId: MERCHANT_ID, limit: 3 });
    for await (const page of first.iterPages()) {
      // Page 2 is asked for while page 1 is in hand (the wait times out otherwise).
      await Promise.race([
        asked,
        new Promise((_, reject) => setTimeout(() => reject(new Error('page 2 was not asked for')), 2_000)),
      ]);
      log.push(`got ${page.pagination.currentPage}`);
      break;
    }
    release();
    expect(log).toEqual(['page 1', 'page 2', 'got 1']);
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(true);
  });

  it('a page fetched ahead that fails throws only after the items before it', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
        if (page === 2)
          return HttpResponse.json({ message: 'Merchant not found', code: 'MERCHANT_NOT_FOUND' }, { status: 404 });
        return reply({ events: all.slice(0, 3), pagination: pagination('primary', 1, 3, all.length) });
      }),
    );
    const got: string[] = [];
    const iterate = async () => {
      for await (const e of makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 })) {
        got.push(e.id);
        // Let the page fetched ahead fail before the next item is asked for.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await expect(iterate()).rejects.toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND' });
    expect(got).toEqual(['evt_1', 'evt_2', 'evt_3']);
  });

  it("the caller's signal aborts the page fetched ahead, and nothing stays attached to it", async () => {
    const log: string[] = [];
    const signals: AbortSignal[] = [];
    serveLogged(log);
    const caller = new AbortController();
    // Listeners attached to the caller's signal, counted as they come and go.
    let attached = 0;
    let added = 0;
    const add = caller.signal.addEventListener.bind(caller.signal);
    const remove = caller.signal.removeEventListener.bind(caller.signal);
    caller.signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      attached++;
      added++;
      add(...args);
    };
    caller.signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      attached--;
      remove(...args);
    };
    const client = recordingClient(signals);
    const got: string[] = [];
    for await (const e of client.events.list({ merchantId: MERCHANT_ID, limit: 3 }, { signal: caller.signal })) {
      got.push(e.id);
    }
    expect(got).toHaveLength(7);
    // Pages 2 and 3 were asked for ahead, each linked to the caller's signal and unlinked after.
    expect(added).toBeGreaterThanOrEqual(2);
    expect(attached).toBe(0);

    // Aborting mid-iteration: the request fetched ahead carries the abort.
    log.length = 0;
    signals.length = 0;
    const second = new AbortController();
    const iterate = async () => {
      for await (const e of client.events.list({ merchantId: MERCHANT_ID, limit: 3 }, { signal: second.signal })) {
        if (e.id === 'evt_1') second.abort();
      }
    };
    await expect(iterate()).rejects.toMatchObject({ name: 'APIUserAbortError' });
    expect(signals.at(-1)?.aborted).toBe(true);
  });
});

describe('following the Link header of a page still being read', () => {
  /**
   * Serves `all` by cursor (`c<offset>`), pages of 3, each with `pagination.nextCursor` and a
   * `Link: <...&cursor=...>; rel="next"` header naming the same cursor (or `linkCursor(offset)`).
   * `bodyOf(offset)` may hold a page's body back after its head has gone out.
   */
  function serveByCursor(
    log: string[],
    options: { bodyOf?: (offset: number) => Promise<void>; linkCursor?: (next: string) => string } = {},
  ) {
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, ({ request }) => {
        const url = new URL(request.url);
        const cursor = url.searchParams.get('cursor');
        const offset = cursor ? Number(cursor.slice(1)) : 0;
        log.push(`ask ${cursor ?? 'first'}`);
        const events = all.slice(offset, offset + 3);
        const nextCursor = offset + 3 < all.length ? `c${offset + 3}` : null;
        const body = JSON.stringify({
          events,
          pagination: { ...(pagination('primary', offset / 3 + 1, 3, all.length) as object), nextCursor },
        });
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (nextCursor) {
          const linked = options.linkCursor?.(nextCursor) ?? nextCursor;
          headers.link = `</v1/partners/events?merchantId=${MERCHANT_ID}&limit=3&events=A%2CB&cursor=${linked}>; rel="next"`;
        }
        const stream = new ReadableStream<Uint8Array>({
          async start(controller) {
            await (options.bodyOf?.(offset) ?? Promise.resolve());
            log.push(`body ${cursor ?? 'first'}`);
            controller.enqueue(new TextEncoder().encode(body));
            controller.close();
          },
        });
        return new HttpResponse(stream, { headers });
      }),
    );
  }

  it('asks for the page after the one it waits for as soon as that page’s head names it', async () => {
    const log: string[] = [];
    let thirdAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      thirdAsked = resolve;
    });
    let releasedBy = '';
    serveByCursor(log, {
      // Page 2's body is held until page 3 has been asked for (or 2 s: then the check below fails).
      bodyOf: async (offset) => {
        if (offset !== 3) return;
        releasedBy = await Promise.race([
          asked.then(() => 'page 3 asked for'),
          new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), 2_000)),
        ]);
      },
    });
    const onStart = ({ request }: { request: Request }) => {
      if (new URL(request.url).searchParams.get('cursor') === 'c6') thirdAsked();
    };
    server.events.on('request:start', onStart);
    const got: string[] = [];
    try {
      for await (const e of makeClient().events.list({ merchantId: MERCHANT_ID, limit: 3 })) got.push(e.id);
    } finally {
      server.events.removeListener('request:start', onStart);
    }
    expect(got).toEqual(all.map((e) => e.id));
    expect(releasedBy).toBe('page 3 asked for');
    expect(log.slice(0, 3)).toEqual(['ask first', 'body first', 'ask c3']);
    expect(log).toHaveLength(6);
  });

  it('a link that disagrees with the body’s nextCursor is dropped for the body’s', async () => {
    const log: string[] = [];
    const signals: AbortSignal[] = [];
    serveByCursor(log, { linkCursor: (next) => (next === 'c6' ? 'c5' : next) });
    const client = makeClient({
      fetch: (input, init) => {
        signals.push(input instanceof Request ? input.signal : (init?.signal ?? new AbortController().signal));
        return fetch(input, init);
      },
    });
    const got: string[] = [];
    for await (const e of client.events.list({ merchantId: MERCHANT_ID, limit: 3 })) got.push(e.id);
    expect(got).toEqual(all.map((e) => e.id));
    expect(log.filter((line) => line.startsWith('ask'))).toEqual(['ask first', 'ask c3', 'ask c5', 'ask c6']);
  });

  it('without prefetchPages, no page is asked for from a link', async () => {
    const log: string[] = [];
    serveByCursor(log);
    const got: string[] = [];
    for await (const e of makeClient({ prefetchPages: false }).events.list({ merchantId: MERCHANT_ID, limit: 3 })) {
      got.push(e.id);
    }
    expect(got).toEqual(all.map((e) => e.id));
    expect(log).toEqual(['ask first', 'body first', 'ask c3', 'body c3', 'ask c6', 'body c6']);
  });
});
