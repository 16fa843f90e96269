import { EVENT_FILTER_MAX_NAMES, StreamEventsQuery, StreamedEvent } from '@partner/shared-schemas';
import { declareRoute } from '../declare-route.js';

const EXAMPLE_EVENT = {
  id: 'evt_01HZX3K9QF',
  muid: 'muid_7d2f9a',
  event_name: 'Purchase',
  event_time: '2026-11-22T10:00:00.000Z',
  raw_data: '{"value":42}',
  consent: 'not_required',
  seq: 1042,
};

const SEQ_PATTERN = '^\\d{1,15}$';

/** An event frame as it is written on the wire. */
const frameText = (id: string, event: string, data: unknown) =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** `GET /v1/partners/events/stream`: the REST twin of the `events.stream` tRPC subscription. */
export const EVENT_STREAM_ROUTE = declareRoute({
  name: 'event stream',
  path: '/v1/partners/events/stream',
  methods: ['GET'],
  auth: 'partner',
  query: StreamEventsQuery,
  queryFromHeaders: { lastEventId: 'Last-Event-ID' },
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'MERCHANT_NOT_FOUND',
    'RATE_LIMITED',
    'DATABASE_ERROR',
    'SERVICE_UNAVAILABLE',
  ],
  docs: {
    operationId: 'events-stream',
    tags: ['Events'],
    summary: 'Stream events (Server-Sent Events)',
    description: [
      "A merchant's tracking events pushed as they are ingested, in ingestion order, as `text/event-stream`.",
      'Each event is a frame `id: <seq>`, `event: event`, `data: <StreamedEvent JSON>`; a `: ping` comment',
      'keeps the connection alive (every 15 s by default). Without `Last-Event-ID` the stream starts with',
      'events ingested after it opened; with it (or `lastEventId`), the events after that id are replayed',
      'from the database first, then live ones follow, with no gap and no duplicate. The resume id is the',
      'frame’s `id:` line (the event’s `seq`), not the event’s own `id`. A consumer that falls',
      'too far behind receives a final `event: error` frame `{ message, code: "STREAM_CONSUMER_TOO_SLOW" }` and',
      'the stream closes: reconnect with the last id. The stream also ends when the server shuts down.',
      'Failures before the stream starts (auth, validation, another partner’s merchant) answer JSON',
      '`{ message, code }` like every other operation. The same stream is the tRPC subscription `events.stream`.',
    ].join(' '),
    // The query schema also takes tRPC's forms (a list of names, null): the REST forms are documented.
    parameters: {
      merchantId: {
        description: 'The merchant whose events to stream (UUID, one of the partner’s merchants).',
        schema: { type: 'string', format: 'uuid' },
        example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
      },
      events: {
        required: false,
        description: `Comma-separated event names to keep (at most ${EVENT_FILTER_MAX_NAMES}); all events when absent.`,
        schema: { type: 'string', maxLength: 4000 },
        example: 'PageView,Purchase',
      },
      lastEventId: {
        required: false,
        description:
          'Resume after this event id: the `id:` line of the last frame received (the event’s `seq`, digits). The `Last-Event-ID` header wins when both are sent.',
        schema: { type: 'string', pattern: SEQ_PATTERN },
        example: '1042',
      },
      'Last-Event-ID': {
        description:
          'Sent by SSE clients on reconnect: resume after this event id (the `id:` line of the last frame, digits).',
        schema: { type: 'string', pattern: SEQ_PATTERN },
        example: '1042',
      },
    },
    success: {
      description:
        'The event stream: `text/event-stream` frames, each described by `StreamFrame` (the `data` of an event frame is a `StreamedEvent`).',
      content: {
        'text/event-stream': {
          schema: {
            type: 'string',
            description: 'Server-Sent Events: frames separated by a blank line, each a `StreamFrame` (`x-itemSchema`).',
            contentMediaType: 'text/event-stream',
            contentSchema: { type: 'array', items: { $ref: '#/components/schemas/StreamFrame' } },
          },
          'x-itemSchema': { $ref: '#/components/schemas/StreamFrame' },
          example: `: ping\n\n${frameText('1042', 'event', EXAMPLE_EVENT)}`,
        },
      },
    },
    components: {
      StreamedEvent: {
        zod: StreamedEvent,
        description:
          'A streamed event: the event list fields plus `seq`, its ingestion-order id (also the SSE `id:` line).',
        example: EXAMPLE_EVENT,
      },
      StreamEventFrame: {
        json: {
          type: 'object',
          description: 'An `event` frame: `id: <seq>`, `event: event`, `data: <StreamedEvent JSON>`.',
          required: ['id', 'event', 'data'],
          properties: {
            id: {
              type: 'string',
              pattern: SEQ_PATTERN,
              description:
                'The `seq` of the event: send it back as `Last-Event-ID` (or `lastEventId`) to resume after it.',
            },
            event: { type: 'string', const: 'event' },
            data: {
              type: 'string',
              description: 'The event as JSON.',
              contentMediaType: 'application/json',
              contentSchema: { $ref: '#/components/schemas/StreamedEvent' },
            },
          },
          example: { id: '1042', event: 'event', data: JSON.stringify(EXAMPLE_EVENT) },
        },
      },
      StreamErrorFrame: {
        json: {
          type: 'object',
          description:
            'The final frame of a stream that failed (e.g. `STREAM_CONSUMER_TOO_SLOW`): `event: error`, `data: <Error JSON>`. No `id`.',
          required: ['event', 'data'],
          properties: {
            event: { type: 'string', const: 'error' },
            data: {
              type: 'string',
              description: 'The error as JSON.',
              contentMediaType: 'application/json',
              contentSchema: { $ref: '#/components/schemas/Error' },
            },
          },
        },
      },
      StreamFrame: {
        json: {
          description:
            'One Server-Sent Events frame of the event stream, as OpenAPI 3.2 models an SSE event (`data` is the text of the `data:` lines).',
          oneOf: [{ $ref: '#/components/schemas/StreamEventFrame' }, { $ref: '#/components/schemas/StreamErrorFrame' }],
        },
      },
    },
  },
});
