// `data` beside `raw_data` on every event the SDK yields: the list (pages and iteration), the
// export and the stream. A raw_data that is not JSON gives `data: undefined`, never a throw.
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import type { TrackingEvent } from '../src/index.js';
import { BASE_URL, makeClient, reply, server, useMsw } from './helpers.js';

useMsw();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';

/** The wire events (no `data`) and the `data` each one should get. */
const CASES: Array<[Omit<TrackingEvent, 'data'>, unknown]> = [
  [wire('e1', '{"value":42,"currency":"EUR"}'), { value: 42, currency: 'EUR' }],
  [wire('e2', '[1,"two"]'), [1, 'two']],
  [wire('e3', '"just a string"'), 'just a string'],
  [wire('e4', 'null'), null],
  [wire('e5', 'not json {'), undefined],
  [wire('e6', ''), undefined],
];

function wire(id: string, raw_data: string): Omit<TrackingEvent, 'data'> {
  return {
    id,
    muid: 'm',
    event_name: 'Purchase',
    event_time: '2026-11-01T00:00:00.000Z',
    raw_data,
    consent: 'not_required',
  };
}

function text(body: string, contentType: string): Response {
  return new HttpResponse(body, { headers: { 'content-type': contentType } });
}

describe('event data', () => {
  it('list: each page item, and each iterated one, has raw_data unchanged and data parsed', async () => {
    server.use(
      http.get(`${BASE_URL}/v1/partners/events`, ({ request }) => {
        const page = Number(new URL(request.url).searchParams.get('page') ?? 1);
        const events = CASES.slice((page - 1) * 3, page * 3).map(([event]) => event);
        return reply({ events, pagination: { currentPage: page, itemsPerPage: 3, totalItems: 6, totalPages: 2 } });
      }),
    );
    const client = makeClient();
    const first = await client.events.list({ merchantId: MERCHANT_ID, limit: 3 });
    expect(first.data.map((e) => e.data)).toEqual(CASES.slice(0, 3).map(([, data]) => data));
    const all: TrackingEvent[] = [];
    for await (const event of client.events.list({ merchantId: MERCHANT_ID, limit: 3 })) all.push(event);
    expect(all).toEqual(CASES.map(([event, data]) => ({ ...event, data })));
  });

  it('export: every event line gets data; the summary ends it', async () => {
    const lines = [...CASES.map(([event]) => JSON.stringify(event)), '{"complete":true,"count":6,"cursor":null}'];
    // A fetch of its own, not msw: an export iterated through msw never ends (request-options.test.ts).
    const fetch = async () => text(`${lines.join('\n')}\n`, 'application/x-ndjson');
    const exported: TrackingEvent[] = [];
    for await (const event of makeClient({ fetch }).events.export({ merchantId: MERCHANT_ID })) exported.push(event);
    expect(exported).toEqual(CASES.map(([event, data]) => ({ ...event, data })));
  });

  it('stream: every event frame gets data', async () => {
    const frames = CASES.map(
      ([event], i) => `id: ${i + 1}\nevent: event\ndata: ${JSON.stringify({ ...event, seq: i + 1 })}\n\n`,
    );
    server.use(http.get(`${BASE_URL}/v1/partners/events/stream`, () => text(frames.join(''), 'text/event-stream')));
    const controller = new AbortController();
    const streamed: unknown[] = [];
    for await (const event of makeClient().events.stream({ merchantId: MERCHANT_ID }, { signal: controller.signal })) {
      streamed.push(event.data);
      if (streamed.length === CASES.length) controller.abort();
    }
    expect(streamed).toEqual(CASES.map(([, data]) => data));
  });
});
