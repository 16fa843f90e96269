// The SDK's idioms against the real server (the SDK's source): a `Date` wherever the API takes a
// date, `data` beside `raw_data` on every event it yields, one pagination shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient, type TrackingEvent } from '../../sdk/src/index.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { preverifiedTag } from './helpers/fixtures.js';

let server: TestServer;
let client: PartnerClient;
let merchantId: string;

// Late on 9 March in New York (EDT, UTC-4) is already 10 March in UTC.
const LATE_EVENING = new Date('2026-03-10T03:30:00Z');
const SENT = [
  { id: 'idiom-1', event_name: 'Purchase', event_time: LATE_EVENING, data: { value: 42, currency: 'EUR' } },
  { id: 'idiom-2', event_name: 'PageView', event_time: new Date('2026-03-10T12:00:00Z'), data: { path: '/' } },
];

beforeAll(async () => {
  server = await startTestServer();
  client = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url, maxRetries: 0 });
  const tag = await preverifiedTag(server);
  merchantId = tag.merchantId;
  await client.events.send({ tagId: tag.tagId, events: SENT });
});
afterAll(() => server?.close());

describe('the SDK against the real server', () => {
  it('stats take a Date as its calendar date in the call’s zone: the same answer as the string', async () => {
    const timezone = 'America/New_York';
    const byDate = await client.stats.summary({ merchantId, startDate: LATE_EVENING, endDate: LATE_EVENING, timezone });
    expect(byDate.range).toEqual({ startDate: '2026-03-09', endDate: '2026-03-09', timezone });
    expect(byDate.totals.events).toBe(1);
    expect(byDate).toEqual(
      await client.stats.summary({ merchantId, startDate: '2026-03-09', endDate: '2026-03-09', timezone }),
    );
    // Without a zone the server reads UTC, and so does the SDK: the same instant is 10 March.
    const utc = await client.stats.timeseries({ merchantId, startDate: LATE_EVENING, endDate: LATE_EVENING });
    expect(utc.range).toMatchObject({ startDate: '2026-03-10', endDate: '2026-03-10' });
    expect(utc.points.map((p) => p.events)).toEqual([2]);
  });

  it('events come with data beside raw_data, from the list (Date filters), its pages and the export', async () => {
    const expected = SENT.map((e) => ({ id: e.id, data: e.data, raw_data: JSON.stringify(e.data) }));
    const shape = (events: TrackingEvent[]) =>
      events.map((e) => ({ id: e.id, data: e.data, raw_data: e.raw_data })).sort((a, b) => a.id.localeCompare(b.id));
    const range = {
      merchantId,
      startDate: new Date('2026-03-09T00:00:00Z'),
      endDate: new Date('2026-03-11T00:00:00Z'),
    };
    const first = await client.events.list({ ...range, limit: 1 });
    expect([first.data.length, first.hasNextPage()]).toEqual([1, true]);
    const listed: TrackingEvent[] = [];
    for await (const event of client.events.list({ ...range, limit: 1 })) listed.push(event);
    expect(shape(listed)).toEqual(expected);
    const exported: TrackingEvent[] = [];
    for await (const event of client.events.export(range)) exported.push(event);
    expect(shape(exported)).toEqual(expected);
  });
});
