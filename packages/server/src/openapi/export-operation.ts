import { ExportSummary, TrackingEvent } from '@partner/shared-schemas';
import type { generateOpenApiDocument } from 'trpc-to-openapi';
import type { ErrorReason } from '../kernel/errors.js';
import { EVENT_EXPORT_PATH } from '../transport/rest/event-export.js';
import { componentSchema } from './schemas.js';

type OpenApiDocument = ReturnType<typeof generateOpenApiDocument>;

const EXPORT_ERRORS: ErrorReason[] = [
  'UNAUTHORIZED',
  'VALIDATION_ERROR',
  'MERCHANT_NOT_FOUND',
  'RATE_LIMITED',
  'DATABASE_ERROR',
  'SERVICE_UNAVAILABLE',
];

const EXAMPLE_LINES = [
  '{"id":"evt_01HZX3K9QF","muid":"muid_7d2f9a","event_name":"Purchase","event_time":"2026-11-22T10:00:00.000Z","raw_data":"{\\"value\\":42}"}',
  '{"id":"evt_01HZX3KA01","muid":"muid_7d2f9a","event_name":"PageView","event_time":"2026-11-22T10:00:05.000Z","raw_data":"{}"}',
  '{"complete":true,"count":2,"cursor":"WzEsMiwiMjAyNi0xMS0yMlQxMDowMDowNS4wMDBaIiwiZXZ0XzAxSFpYM0tBMDEiXQ.q2b1cXy0m2jv3dE5gQnN1A"}',
];

/**
 * Adds `GET /v1/partners/events/export` (transport/rest/event-export.ts, a plain HTTP route: a streamed body
 * is no tRPC procedure). Its query parameters are the event list's, minus `page` and `limit`, plus
 * `afterId`, copied from the list's generated operation so both stay described the same way.
 */
export function addEventExportOperation(
  doc: OpenApiDocument,
  errorResponses: (reasons: ErrorReason[], authenticated: boolean) => Record<string, unknown>,
  finish: (operation: Record<string, unknown>) => void,
): void {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, unknown>;
  schemas.ExportSummary = {
    ...componentSchema(ExportSummary),
    description: 'The last line of a complete export. A body that does not end with it was cut: resume with `afterId`.',
    example: JSON.parse(EXAMPLE_LINES[2] as string),
  };
  schemas.ExportLine = {
    description: 'One NDJSON line of an export: an event (exactly as the event list gives it), then the summary.',
    oneOf: [{ $ref: '#/components/schemas/TrackingEvent' }, { $ref: '#/components/schemas/ExportSummary' }],
  };
  schemas.TrackingEvent ??= componentSchema(TrackingEvent);
  const paths = (doc.paths ?? {}) as Record<string, Record<string, { parameters?: Array<Record<string, unknown>> }>>;
  const listParameters = (paths['/v1/partners/events']?.get?.parameters ?? []).filter(
    (p) => p.in === 'query' && p.name !== 'page' && p.name !== 'limit',
  );
  const operation: Record<string, unknown> = {
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
    security: [{ Authorization: [] }],
    parameters: [
      ...listParameters.map((p) => ({ ...p })),
      {
        name: 'afterId',
        in: 'query',
        required: false,
        description:
          'Resume a cut download: the `id` of the last event line received (with the same filters and sort). Not with `cursor`.',
        schema: { type: 'string', minLength: 1, maxLength: 128 },
        example: 'evt_01HZX3KA01',
      },
    ],
    responses: {
      '200': {
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
            schema: {
              type: 'array',
              description: 'The lines of the body, in order (each one JSON document followed by a newline).',
              items: { $ref: '#/components/schemas/ExportLine' },
            },
            example: EXAMPLE_LINES.map((line) => JSON.parse(line)),
          },
        },
      },
      ...errorResponses(EXPORT_ERRORS, true),
    },
  };
  const responses = operation.responses as Record<string, { description: string }>;
  const tooMany = responses['429'];
  if (tooMany) {
    tooMany.description =
      'RATE_LIMITED: too many requests for this API key, or too many concurrent exports (per partner or on this server); retry after `Retry-After` seconds';
  }
  finish(operation);
  (paths as Record<string, unknown>)[EVENT_EXPORT_PATH] = { get: operation };
  doc.paths = paths as never;
}
