import { ExportEventsQuery, ExportSummary, TrackingEvent } from '@partner/shared-schemas';
import { declareRoute } from '../declare-route.js';

const EXAMPLE_LINES = [
  '{"id":"evt_01HZX3K9QF","muid":"muid_7d2f9a","event_name":"Purchase","event_time":"2026-11-22T10:00:00.000Z","raw_data":"{\\"value\\":42}","consent":"granted"}',
  '{"id":"evt_01HZX3KA01","muid":"muid_7d2f9a","event_name":"PageView","event_time":"2026-11-22T10:00:05.000Z","raw_data":"{}","consent":"cookieless"}',
  '{"complete":true,"count":2,"cursor":"WzEsMiwiMjAyNi0xMS0yMlQxMDowMDowNS4wMDBaIiwiZXZ0XzAxSFpYM0tBMDEiXQ.q2b1cXy0m2jv3dE5gQnN1A"}',
].map((line) => JSON.parse(line) as Record<string, unknown>);

/** `GET /v1/partners/events/export`: a merchant's events as NDJSON, streamed. */
export const EVENT_EXPORT_ROUTE = declareRoute({
  name: 'event export',
  path: '/v1/partners/events/export',
  methods: ['GET'],
  auth: 'partner',
  query: ExportEventsQuery,
  errors: [
    'UNAUTHORIZED',
    'VALIDATION_ERROR',
    'MERCHANT_NOT_FOUND',
    'RATE_LIMITED',
    'DATABASE_ERROR',
    'SERVICE_UNAVAILABLE',
  ],
  docs: {
    operationId: 'events-export',
    tags: ['Events'],
    summary: 'Export events (NDJSON)',
    description: [
      "Every event of a merchant that matches the list's filters, in the list's order, streamed as",
      '`application/x-ndjson` (gzip when `Accept-Encoding` allows it): one line per event, exactly the JSON the',
      'event list gives for it, then a final line `{"complete": true, "count": N, "cursor": "..."}`. A body',
      'without that line at the end was cut: call again with `afterId` = the `id` of the last line received',
      '(same filters and sort) to continue where it stopped. The final `cursor` continues after the last event,',
      'for a later incremental export (`sortOrder=asc`) or the list. Memory on the server stays constant',
      'whatever the size: events are read in keyset batches as the client reads, so a slow reader slows the',
      'export down (batches of about 2 MB). A failure after the first line ends the body with `{"complete": false,',
      '"count": N, "error": { message, code }}`: `UNAUTHORIZED` when the API key is revoked or expires during the',
      'export, `STREAM_CONSUMER_TOO_SLOW` when the server holds too much for slow readers and this one went longest',
      'without reading (resume with `afterId`). Failures before it (auth, validation, another partner’s merchant)',
      'answer JSON `{ message, code }`; a partner with 4 exports running (the server’s default) gets 429',
      '`RATE_LIMITED` with `Retry-After`.',
    ].join(' '),
    parameters: {
      afterId: {
        required: false,
        description:
          'Resume a cut download: the `id` of the last event line received (with the same filters and sort). Not with `cursor`.',
        schema: { type: 'string', minLength: 1, maxLength: 128 },
        example: 'evt_01HZX3KA01',
      },
    },
    success: {
      description: 'The export: NDJSON lines, each an `ExportLine` (events, then the `ExportSummary`).',
      headers: {
        'Content-Encoding': {
          description: '`gzip` when the request accepted it (`Accept-Encoding: gzip`); absent otherwise.',
          schema: { type: 'string', enum: ['gzip'] },
          example: 'gzip',
        },
      },
      content: {
        'application/x-ndjson': {
          // Text, read line by line.
          schema: {
            type: 'string',
            description:
              'Newline-delimited JSON: one JSON document per line, each an `ExportLine` (`x-itemSchema`), the last one the `ExportSummary`.',
            contentMediaType: 'application/x-ndjson',
            contentSchema: { type: 'array', items: { $ref: '#/components/schemas/ExportLine' } },
          },
          'x-itemSchema': { $ref: '#/components/schemas/ExportLine' },
          example: `${EXAMPLE_LINES.map((line) => JSON.stringify(line)).join('\n')}\n`,
        },
      },
    },
    errorDescriptions: {
      429: 'RATE_LIMITED: too many requests for this API key, or too many concurrent exports (per partner or on this server); retry after `Retry-After` seconds',
    },
    components: {
      ExportSummary: {
        zod: ExportSummary,
        description:
          'The last line of a complete export. A body that does not end with it was cut: resume with `afterId`.',
        example: EXAMPLE_LINES[2],
      },
      ExportLine: {
        json: {
          description: 'One NDJSON line of an export: an event (exactly as the event list gives it), then the summary.',
          oneOf: [{ $ref: '#/components/schemas/TrackingEvent' }, { $ref: '#/components/schemas/ExportSummary' }],
        },
      },
      TrackingEvent: { zod: TrackingEvent },
    },
  },
});
