import type { generateOpenApiDocument } from 'trpc-to-openapi';
import type { ErrorReason } from '../errors.js';
import { EVENT_STREAM_PATH, MAX_STREAM_EVENT_NAMES } from './event-stream.js';

type OpenApiDocument = ReturnType<typeof generateOpenApiDocument>;

const STREAM_ERRORS: ErrorReason[] = [
  'UNAUTHORIZED',
  'VALIDATION_ERROR',
  'MERCHANT_NOT_FOUND',
  'RATE_LIMITED',
  'DATABASE_ERROR',
  'SERVICE_UNAVAILABLE',
];

/**
 * Adds `GET /v1/partners/events/stream` to the document: trpc-to-openapi cannot describe
 * subscriptions, and the REST stream is a plain HTTP route (http/event-stream.ts).
 */
export function addEventStreamOperation(
  doc: OpenApiDocument,
  errorResponses: (reasons: ErrorReason[], authenticated: boolean) => Record<string, unknown>,
): void {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  const trackingEvent = schemas.TrackingEvent ? { $ref: '#/components/schemas/TrackingEvent' } : { type: 'object' };
  schemas.StreamedEvent = {
    description: 'A streamed event: the event list fields plus `seq`, its ingestion-order id (also the SSE `id`).',
    allOf: [
      trackingEvent,
      {
        type: 'object',
        required: ['seq'],
        properties: { seq: { type: 'integer', minimum: 1, description: 'Ingestion order; resume after it.' } },
      },
    ],
  };
  const paths = (doc.paths ?? {}) as Record<string, unknown>;
  paths[EVENT_STREAM_PATH] = {
    get: {
      operationId: 'events-stream',
      tags: ['Events'],
      summary: 'Stream events (Server-Sent Events)',
      description: [
        "A merchant's tracking events pushed as they are ingested, in ingestion order, as `text/event-stream`.",
        'Each event is a frame `id: <seq>`, `event: event`, `data: <StreamedEvent JSON>`; a `: ping` comment',
        'keeps the connection alive (every 15 s by default). Without `Last-Event-ID` the stream starts with',
        'events ingested after it opened; with it (or `lastEventId`), the events after that id are replayed',
        'from the database first, then live ones follow, with no gap and no duplicate. A consumer that falls',
        'too far behind receives a final `event: error` frame `{ message, code: "STREAM_CONSUMER_TOO_SLOW" }` and',
        'the stream closes: reconnect with the last id. The stream also ends when the server shuts down.',
        'Failures before the stream starts (auth, validation, another partner’s merchant) answer JSON',
        '`{ message, code }` like every other operation. The same stream is the tRPC subscription `events.stream`.',
      ].join(' '),
      security: [{ Authorization: [] }],
      parameters: [
        { name: 'merchantId', in: 'query', required: true, schema: { type: 'string', format: 'uuid' } },
        {
          name: 'events',
          in: 'query',
          required: false,
          description: `Comma-separated event names to keep (at most ${MAX_STREAM_EVENT_NAMES}), e.g. \`PageView,Purchase\`.`,
          schema: { type: 'string', maxLength: 4000 },
        },
        {
          name: 'lastEventId',
          in: 'query',
          required: false,
          description: 'Resume after this event id (`seq`); the `Last-Event-ID` header wins when both are sent.',
          schema: { type: 'string', pattern: '^\\d{1,15}$' },
        },
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'Sent by SSE clients on reconnect: resume after this event id (`seq`).',
          schema: { type: 'string', pattern: '^\\d{1,15}$' },
        },
      ],
      responses: {
        '200': {
          description: 'The event stream.',
          content: {
            'text/event-stream': {
              schema: { type: 'string', description: 'SSE frames whose `data` is a StreamedEvent (or an Error).' },
              'x-sse-data': { $ref: '#/components/schemas/StreamedEvent' },
            },
          },
        },
        ...errorResponses(STREAM_ERRORS, true),
      },
    },
  };
  doc.paths = paths as never;
}
