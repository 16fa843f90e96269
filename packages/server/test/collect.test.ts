import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import {
  allEvents,
  collect,
  collectOk,
  generateTag,
  listEvents,
  listedTag,
  MISSING_ID,
  preverifiedTag,
  publishCname,
} from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('POST /v1/collect: acceptance', () => {
  it('answers 202 { accepted } without any Authorization header and the events are readable at once', async () => {
    const tag = await preverifiedTag(server);
    const res = await api(server).post('/v1/collect', {
      tagId: tag.tagId,
      events: [
        { id: 'a1', event_name: 'PageView', muid: 'u1', event_time: '2026-06-01T10:00:00Z', data: { path: '/' } },
        { id: 'a2', event_name: 'Purchase', muid: 'u1', event_time: '2026-06-01T10:05:00Z', data: { value: 10 } },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 2 });
    const listed = await listEvents(server, tag.merchantId, { sortOrder: 'asc' });
    expect(listed.body.events).toEqual([
      {
        id: 'a1',
        muid: 'u1',
        event_name: 'PageView',
        event_time: '2026-06-01T10:00:00.000Z',
        raw_data: '{"path":"/"}',
        consent: 'not_required',
      },
      {
        id: 'a2',
        muid: 'u1',
        event_name: 'Purchase',
        event_time: '2026-06-01T10:05:00.000Z',
        raw_data: '{"value":10}',
        consent: 'not_required',
      },
    ]);
  });

  it('ignores an Authorization header: the endpoint is public', async () => {
    const tag = await preverifiedTag(server);
    const res = await api(server, 'not-a-key').post('/v1/collect', { tagId: tag.tagId, events: [{ event_name: 'X' }] });
    expect(res.status).toBe(202);
  });

  it('accepts 1 and 500 events and rejects 0 and 501 with 400', async () => {
    const tag = await preverifiedTag(server);
    const batch = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, event_name: 'PageView' }));
    expect((await collect(server, tag.tagId, batch(1, 'one'))).body).toEqual({ accepted: 1 });
    expect((await collect(server, tag.tagId, batch(500, 'max'))).body).toEqual({ accepted: 500 });
    for (const n of [0, 501]) {
      const res = await collect(server, tag.tagId, batch(n, `bad${n}`));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('events') });
    }
    const listed = await listEvents(server, tag.merchantId, { limit: 1 });
    expect(listed.body.pagination.totalItems).toBe(501);
  });

  it('stores a repeated batch once', async () => {
    const tag = await preverifiedTag(server);
    const batch = [
      { id: 'dup-1', event_name: 'PageView', event_time: '2026-06-02T00:00:00Z' },
      { id: 'dup-2', event_name: 'Purchase', event_time: '2026-06-02T00:00:01Z' },
    ];
    expect((await collect(server, tag.tagId, batch)).body).toEqual({ accepted: 2 });
    const again = await collect(server, tag.tagId, batch);
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ accepted: 2 });
    const events = await allEvents(server, tag.merchantId);
    expect(events.map((e) => e.id).sort()).toEqual(['dup-1', 'dup-2']);
  });

  it('stores an id repeated inside one batch once, keeping the first copy', async () => {
    const tag = await preverifiedTag(server);
    const res = await collect(server, tag.tagId, [
      { id: 'same', event_name: 'First' },
      { id: 'same', event_name: 'Second' },
    ]);
    expect(res.status).toBe(202);
    const events = await allEvents(server, tag.merchantId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: 'same', event_name: 'First' });
  });

  it('keys ids per merchant: the same id is stored for two merchants', async () => {
    const a = await preverifiedTag(server);
    const b = await preverifiedTag(server);
    await collectOk(server, a.tagId, [{ id: 'shared', event_name: 'A' }]);
    await collectOk(server, b.tagId, [{ id: 'shared', event_name: 'B' }]);
    expect((await allEvents(server, a.merchantId)).map((e) => e.event_name)).toEqual(['A']);
    expect((await allEvents(server, b.merchantId)).map((e) => e.event_name)).toEqual(['B']);
  });
});

describe('POST /v1/collect: defaults', () => {
  it('assigns an id, a muid and the time of receipt when they are missing', async () => {
    const tag = await preverifiedTag(server);
    const before = Date.now();
    await collectOk(server, tag.tagId, [{ event_name: 'PageView' }, { event_name: 'PageView' }]);
    const after = Date.now();
    const events = await allEvents(server, tag.merchantId);
    expect(events).toHaveLength(2);
    const [first, second] = events as [Json, Json];
    expect(first.id).toEqual(expect.any(String));
    expect(first.id.length).toBeGreaterThan(0);
    expect(first.id).not.toBe(second.id);
    expect(first.muid).toEqual(expect.any(String));
    expect(first.muid.length).toBeGreaterThan(0);
    for (const event of events) {
      const time = Date.parse(event.event_time);
      expect(time).toBeGreaterThanOrEqual(before - 5);
      expect(time).toBeLessThanOrEqual(after + 5);
      expect(event.raw_data).toBe('{}');
    }
  });

  it('normalises event_time to UTC and trims event_name', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, [
      { id: 'tz', event_name: '  Login  ', event_time: '2026-06-03T12:00:00+02:00' },
    ]);
    const [event] = await allEvents(server, tag.merchantId);
    expect(event).toMatchObject({ event_name: 'Login', event_time: '2026-06-03T10:00:00.000Z' });
  });

  it.each([
    ['an array', [1, 'two', { three: 3 }]],
    ['a string', 'hello'],
    ['a number', 12.5],
    ['a boolean', false],
    ['a nested object', { a: { b: { c: [null, true] } } }],
  ])('returns data that is %s as its JSON text in raw_data', async (_, data) => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, [{ id: 'd', event_name: 'Custom', data }]);
    const [event] = await allEvents(server, tag.merchantId);
    expect(event.raw_data).toBe(JSON.stringify(data));
    expect(JSON.parse(event.raw_data)).toEqual(data);
  });

  it('stores data that is null or absent as {}', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, [
      { id: 'n', event_name: 'Custom', data: null },
      { id: 'u', event_name: 'Custom' },
    ]);
    const stored = await allEvents(server, tag.merchantId);
    expect(stored.map((e: { raw_data: string }) => e.raw_data)).toEqual(['{}', '{}']);
  });
});

describe('POST /v1/collect: validation', () => {
  it('accepts data nested 50 levels deep and returns it intact', async () => {
    const tag = await preverifiedTag(server);
    let data: unknown = { leaf: true };
    for (let i = 0; i < 50; i++) data = { level: i, next: data };
    await collectOk(server, tag.tagId, [{ id: 'deep', event_name: 'Custom', data }]);
    const [event] = await allEvents(server, tag.merchantId);
    expect(JSON.parse(event.raw_data)).toEqual(data);
  });

  it.each([5_000, 200_000])('rejects data nested %i levels deep with 400 (not 500)', async (depth) => {
    const tag = await preverifiedTag(server);
    const body = `{"tagId":"${tag.tagId}","events":[{"event_name":"X","data":${'['.repeat(depth)}${']'.repeat(depth)}}]}`;
    const res = await api(server).post('/v1/collect', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('nested') });
    expect(await allEvents(server, tag.merchantId)).toEqual([]);
  });

  it('accepts an event_name of 100 characters and a custom name', async () => {
    const tag = await preverifiedTag(server);
    const res = await collect(server, tag.tagId, [
      { event_name: 'E'.repeat(100) },
      { event_name: 'Newsletter Signup' },
    ]);
    expect(res.status).toBe(202);
  });

  it.each([
    ['event_name of 101 characters', { event_name: 'E'.repeat(101) }, 'event_name'],
    ['empty event_name', { event_name: '' }, 'event_name'],
    ['whitespace event_name', { event_name: '   ' }, 'event_name'],
    ['missing event_name', {}, 'event_name'],
    ['non-string event_name', { event_name: 5 }, 'event_name'],
    ['unparseable event_time', { event_name: 'X', event_time: 'now' }, 'event_time'],
    ['empty id', { id: '', event_name: 'X' }, 'id'],
    ['id of 129 characters', { id: 'i'.repeat(129), event_name: 'X' }, 'id'],
  ])('rejects an event with %s with 400 and stores nothing', async (_, event, field) => {
    const tag = await preverifiedTag(server);
    const res = await api(server).post('/v1/collect', {
      tagId: tag.tagId,
      events: [{ id: 'good', event_name: 'PageView' }, event],
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(field) });
    expect(await allEvents(server, tag.merchantId)).toEqual([]);
  });

  it.each([
    ['a missing tagId', { events: [{ event_name: 'X' }] }],
    ['a tagId that is not a UUID', { tagId: 'tag', events: [{ event_name: 'X' }] }],
    ['missing events', { tagId: MISSING_ID }],
    ['events that is not an array', { tagId: MISSING_ID, events: { event_name: 'X' } }],
  ])('rejects %s with 400', async (_, body) => {
    const res = await api(server).post('/v1/collect', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('answers 404 TAG_NOT_FOUND for an unknown tag', async () => {
    const res = await collect(server, MISSING_ID, [{ event_name: 'PageView' }]);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'TAG_NOT_FOUND', message: expect.stringContaining(MISSING_ID) });
  });
});

describe('POST /v1/collect: tag lifecycle', () => {
  it('answers 409 TAG_NOT_LIVE for an unverified custom tag and stores nothing', async () => {
    const tag = await generateTag(server);
    const res = await collect(server, tag.tagId, [{ id: 'early', event_name: 'PageView' }]);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 'TAG_NOT_LIVE', message: expect.stringContaining(tag.tagId) });
    expect(await allEvents(server, tag.merchantId)).toEqual([]);
    expect(await listedTag(server, tag)).toMatchObject({ status: 'inactive' });
  });

  it('takes events after verification, and the first event makes the tag active', async () => {
    const tag = await generateTag(server);
    expect((await collect(server, tag.tagId, [{ event_name: 'PageView' }])).status).toBe(409);
    publishCname(server, tag);
    const verified = await api(server, server.partner.apiKey).post('/v1/partners/tag/verify', {
      tagId: tag.tagId,
      subdomain: tag.domain,
    });
    expect(verified.status).toBe(200);
    expect(await listedTag(server, tag)).toMatchObject({ status: 'waiting_for_events' });

    const res = await collect(server, tag.tagId, [{ id: 'first', event_name: 'PageView' }]);
    expect(res.status).toBe(202);
    expect(await listedTag(server, tag)).toMatchObject({ status: 'active', isConnected: true, isVerified: true });
    expect((await allEvents(server, tag.merchantId)).map((e) => e.id)).toEqual(['first']);
  });

  it('takes events on a preverified tag at once and it stays active', async () => {
    const tag = await preverifiedTag(server);
    expect(tag.status).toBe('active');
    const res = await collect(server, tag.tagId, [{ event_name: 'PageView' }]);
    expect(res.status).toBe(202);
    expect(await listedTag(server, tag)).toMatchObject({ status: 'active' });
  });
});
