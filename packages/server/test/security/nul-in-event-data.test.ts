import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeEvents } from '../../src/features/events/ingest/store-events.js';
import { startTestServer, type TestPartner, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { collectorHostOf, postEvents } from '../helpers/collector.js';
import { collectOk, type GeneratedTag, listEvents, preverifiedTag } from '../helpers/fixtures.js';

/**
 * Issue 51, finding 1 (unauthenticated): an event with U+0000 anywhere in `data` was accepted
 * (202) and stored as JSON text holding `\u0000`, which breaks every later cast to jsonb
 * ("unsupported Unicode escape sequence"): the statistics' fold failed on every pass, and every
 * partner's visitor erasure with it. Now the schemas refuse it (400 naming the field) on every
 * transport, and a row an older version stored that way holds up no other partner's erasure and
 * no merchant's event list or export.
 */
let server: TestServer;
let other: TestPartner;

beforeAll(async () => {
  // Erasures start DB_STATEMENT_TIMEOUT + 0.5 s after they are asked for (as test/deletion/erasure.test.ts).
  server = await startTestServer({ env: { DB_STATEMENT_TIMEOUT: '1000' } });
  other = await server.createPartner('Other partner');
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const NUL = '\u0000';

describe('U+0000 in an event is a 400 naming the field, on every transport', () => {
  let tag: GeneratedTag;
  let host: string;
  beforeAll(async () => {
    tag = await preverifiedTag(server);
    host = await collectorHostOf(server, tag);
  });

  const cases: Array<[string, Record<string, unknown>]> = [
    ['a data value', { event_name: 'Purchase', data: { value: 5, currency: `EU${NUL}` } }],
    ['a nested data value', { event_name: 'PageView', data: { page: { path: [`/a${NUL}b`] } } }],
    ['a nested data key', { event_name: 'PageView', data: { utm: { [`k${NUL}`]: 1 } } }],
    ['data itself (a string)', { event_name: 'PageView', data: NUL }],
    ['event_name', { event_name: `Page${NUL}View` }],
    ['id', { event_name: 'PageView', id: `evt-${NUL}` }],
    ['muid', { event_name: 'PageView', muid: `m${NUL}` }],
  ];
  for (const [where, event] of cases) {
    it(`${where}: REST /v1/collect, tRPC collect.ingest and the tag's POST /e`, async () => {
      const field = where.includes('data') ? 'data' : where;
      const events = [{ event_name: 'PageView' }, event];
      const expected = {
        message: expect.stringMatching(`events\\.1\\.${field}: .*U\\+0000`),
        code: 'VALIDATION_ERROR',
      };
      const rest = await api(server).post('/v1/collect', { tagId: tag.tagId, events });
      expect([rest.status, rest.body]).toEqual([400, expected]);
      const trpc = await api(server).post('/trpc/collect.ingest', { tagId: tag.tagId, events });
      expect([trpc.status, trpc.body.error?.data?.code, trpc.body.error?.message]).toEqual([
        400,
        'VALIDATION_ERROR',
        expected.message,
      ]);
      const browser = await postEvents(server.url, host, { tagId: tag.tagId, events });
      expect([browser.status, browser.json]).toEqual([400, expected]);
    });
  }

  it('nothing of those batches was stored; text that only looks like the escape is kept as sent', async () => {
    const lookalike = { event_name: 'PageView', id: 'lookalike', data: { note: '\\u0000' } };
    await collectOk(server, tag.tagId, [lookalike]);
    const res = await listEvents(server, tag.merchantId, { limit: 100 });
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: { id: string; raw_data: string }) => [e.id, e.raw_data])).toEqual([
      ['lookalike', JSON.stringify(lookalike.data)],
    ]);
  });
});

describe('a row an older version stored with `\\u0000` in raw_data', () => {
  it("holds up neither another partner's visitor erasure nor any merchant's event list and export", async () => {
    // What a version before the fix stored: the whole ingestion path's insert, statistics queue included.
    const legacy = await preverifiedTag(server);
    await storeEvents(
      server.app.deps.db,
      ['Purchase', 'PageView'].map((eventName) => ({
        merchantId: legacy.merchantId,
        tagId: legacy.tagId,
        id: `legacy-${eventName}`,
        muid: 'legacy-visitor',
        eventName,
        eventTime: new Date().toISOString(),
        rawData: JSON.stringify({ value: 5, currency: 'EUR', path: `/a${NUL}` }),
      })),
    );

    const shop = await preverifiedTag(server, other);
    const visitorEvents = ['v1', 'v2'].flatMap((muid) =>
      ['PageView', 'Purchase'].map((name) => ({
        id: `${muid}-${name}`,
        muid,
        event_name: name,
        data: { path: '/p', value: 5, currency: 'EUR' },
      })),
    );
    await collectOk(server, shop.tagId, visitorEvents);
    const client = api(server, other.apiKey);
    const asked = await client.post('/v1/partners/erasures', { muid: 'v1', merchantId: shop.merchantId });
    expect(asked.status).toBe(202);
    const started = Date.now();
    let erasure: { status: string; eventsDeleted: number } | undefined;
    while (Date.now() - started < 20_000) {
      const got = await client.get(`/v1/partners/erasures/${asked.body.id}`);
      expect(got.status).toBe(200);
      erasure = got.body;
      if (erasure?.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(erasure).toMatchObject({ status: 'completed', eventsDeleted: 2 });
    console.info(`nul-in-event-data: the other partner's erasure completed in ${Date.now() - started} ms`);

    const left = await listEvents(server, shop.merchantId, { limit: 100 }, other.apiKey);
    expect(left.status).toBe(200);
    expect(left.body.events.map((e: { id: string }) => e.id).sort()).toEqual(['v2-PageView', 'v2-Purchase']);
    // The legacy merchant's own list and export still answer, with the row as it is stored.
    const list = await listEvents(server, legacy.merchantId, { limit: 100 });
    expect(list.status).toBe(200);
    expect(list.body.events).toHaveLength(2);
    expect(list.body.events[0].raw_data).toContain('\\u0000');
    for (const [key, merchantId, count] of [
      [other.apiKey, shop.merchantId, 2],
      [server.partner.apiKey, legacy.merchantId, 2],
    ] as const) {
      const exported = await api(server, key).get(`/v1/partners/events/export?merchantId=${merchantId}`);
      expect(exported.status).toBe(200);
      const lines = exported.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.at(-1)).toMatchObject({ complete: true, count });
    }
  }, 60_000);
});
