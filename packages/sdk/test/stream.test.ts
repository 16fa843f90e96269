// The SSE parser and the reconnecting event stream, against msw.
import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { SSEParser } from '../src/core/sse.js';
import { AuthenticationError, NotFoundError, type StreamedEvent } from '../src/index.js';
import { API_KEY, BASE_URL, makeClient, server, useMsw, useRecordedSleep } from './helpers.js';

useMsw();
const delays = useRecordedSleep();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const STREAM_URL = `${BASE_URL}/v1/partners/events/stream`;

function event(seq: number, name = 'PageView'): StreamedEvent {
  return {
    seq,
    id: `e-${seq}`,
    muid: 'u',
    event_name: name,
    event_time: '2026-01-01T00:00:00.000Z',
    raw_data: '{}',
    consent: 'not_required',
  };
}

const frame = (e: StreamedEvent) => `id: ${e.seq}\nevent: event\ndata: ${JSON.stringify(e)}\n\n`;

/** An SSE response whose body is the given chunks, then the end of the stream (or left open). */
function sse(chunks: string[], options: { keepOpen?: boolean } = {}): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      if (!options.keepOpen) controller.close();
    },
  });
  return new HttpResponse(body, { headers: { 'content-type': 'text/event-stream' } });
}

describe('SSEParser', () => {
  it('parses fields, multi-line data, comments and every line ending, across chunk boundaries', () => {
    const parser = new SSEParser();
    const text = '\uFEFF: hello\n\nid: 1\nevent: event\ndata: a\ndata: b\n\nid: 2\r\ndata:c\r\n\r\ndata: d\re';
    const out = [];
    // Fed one character at a time: every split point, including inside `\r\n`.
    for (const char of text) out.push(...parser.push(char));
    out.push(...parser.push('vent: x\r\r'));
    expect(out).toEqual([
      { id: '1', event: 'event', data: 'a\nb', retry: undefined },
      { id: '2', event: 'message', data: 'c', retry: undefined },
      { id: undefined, event: 'x', data: 'd', retry: undefined },
    ]);
  });

  it('ignores a message without data, unknown fields and a bad retry; reads a valid retry', () => {
    const parser = new SSEParser();
    expect(parser.push('event: ping\n\nfoo: bar\nretry: x\ndata: 1\n\nretry: 2500\ndata: 2\n\n')).toEqual([
      { id: undefined, event: 'message', data: '1', retry: undefined },
      { id: undefined, event: 'message', data: '2', retry: 2500 },
    ]);
  });
});

describe('client.events.stream', () => {
  it('yields typed events, sends the key, the filter and Accept, and ends on abort', async () => {
    const seen: Request[] = [];
    server.use(
      http.get(STREAM_URL, ({ request }) => {
        seen.push(request.clone());
        return sse([': connected\n\n', frame(event(1)), ': ping\n\n', frame(event(2, 'Purchase'))], { keepOpen: true });
      }),
    );
    const controller = new AbortController();
    const got: StreamedEvent[] = [];
    const stream = makeClient().events.stream(
      { merchantId: MERCHANT_ID, events: ['PageView', 'Purchase'] },
      { signal: controller.signal },
    );
    for await (const e of stream) {
      got.push(e);
      if (got.length === 2) controller.abort();
    }
    expect(got).toEqual([
      { ...event(1), data: {} },
      { ...event(2, 'Purchase'), data: {} },
    ]);
    expect(stream.lastEventId).toBe('2');
    expect(seen).toHaveLength(1);
    const url = new URL(seen[0]?.url ?? '');
    expect(url.searchParams.get('merchantId')).toBe(MERCHANT_ID);
    expect(url.searchParams.get('events')).toBe('PageView,Purchase');
    expect(seen[0]?.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(seen[0]?.headers.get('accept')).toBe('text/event-stream');
    expect(seen[0]?.headers.get('last-event-id')).toBeNull();
  });

  it('reconnects with backoff and Last-Event-ID after the stream ends or a final error event', async () => {
    const lastIds: (string | null)[] = [];
    const responses = [
      () => sse([frame(event(1)), frame(event(2))]), // ends (server restart)
      () => new HttpResponse(null, { status: 503 }), // retryable
      () => sse([frame(event(3)), 'event: error\ndata: {"message":"slow","code":"STREAM_CONSUMER_TOO_SLOW"}\n\n']),
      () => sse([frame(event(4))], { keepOpen: true }),
    ];
    server.use(
      http.get(STREAM_URL, ({ request }) => {
        lastIds.push(request.headers.get('last-event-id'));
        const next = responses.shift();
        if (!next) throw new Error('no more responses');
        return next();
      }),
    );
    const controller = new AbortController();
    const got: number[] = [];
    for await (const e of makeClient().events.stream({ merchantId: MERCHANT_ID }, { signal: controller.signal })) {
      got.push(e.seq);
      if (e.seq === 4) controller.abort();
    }
    expect(got).toEqual([1, 2, 3, 4]);
    expect(lastIds).toEqual([null, '2', '2', '3']);
    expect(delays).toHaveLength(3);
    expect(delays[1]).toBeGreaterThan(delays[0] as number); // backoff grows while failing
  });

  it('resumes from a given lastEventId', async () => {
    let lastId: string | null = null;
    server.use(
      http.get(STREAM_URL, ({ request }) => {
        lastId = request.headers.get('last-event-id');
        return sse([frame(event(8))], { keepOpen: true });
      }),
    );
    const controller = new AbortController();
    for await (const _ of makeClient().events.stream(
      { merchantId: MERCHANT_ID, lastEventId: '7' },
      { signal: controller.signal },
    )) {
      controller.abort();
    }
    expect(lastId).toBe('7');
  });

  it('throws errors that a retry cannot fix (401, 404) without retrying', async () => {
    let calls = 0;
    server.use(
      http.get(STREAM_URL, () => {
        calls += 1;
        return HttpResponse.json({ message: 'No merchant', code: 'MERCHANT_NOT_FOUND' }, { status: 404 });
      }),
    );
    const iterate = async () => {
      for await (const _ of makeClient().events.stream({ merchantId: MERCHANT_ID })) {
        // nothing
      }
    };
    await expect(iterate()).rejects.toBeInstanceOf(NotFoundError);
    expect(calls).toBe(1);
    server.use(
      http.get(STREAM_URL, () =>
        HttpResponse.json(
          { statusCode: 401, message: 'Bearer token is required', error: 'Unauthorized' },
          { status: 401 },
        ),
      ),
    );
    await expect(iterate()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('gives up after maxRetries failed connections in a row', async () => {
    let calls = 0;
    server.use(
      http.get(STREAM_URL, () => {
        calls += 1;
        return HttpResponse.error();
      }),
    );
    const iterate = async () => {
      for await (const _ of makeClient().events.stream({ merchantId: MERCHANT_ID }, { maxRetries: 2 })) {
        // nothing
      }
    };
    await expect(iterate()).rejects.toMatchObject({ name: 'APIConnectionError' });
    expect(calls).toBe(3);
  });

  it('a loop that breaks ends the stream: no reconnect', async () => {
    let calls = 0;
    server.use(
      http.get(STREAM_URL, () => {
        calls += 1;
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(frame(event(1))));
          },
        });
        return new HttpResponse(body, { headers: { 'content-type': 'text/event-stream' } });
      }),
    );
    for await (const _ of makeClient().events.stream({ merchantId: MERCHANT_ID })) break;
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    expect(delays).toEqual([]);
  });
});
