import { z } from 'zod';
import { Timestamp, Uuid } from './common.js';
import { INSTANT_RANGE_MESSAGE, isCanonicalInstant, MAX_INSTANT_MS, readIsoInstant } from './dates.js';
import { VisitorId } from './erasure.js';
import { Pagination, paginationQuery } from './pagination.js';
import {
  deepTextProblem,
  EVENT_DATA_MAX_CHARS,
  isNulFree,
  isWellFormedText,
  NUL_MESSAGE,
  WELL_FORMED_MESSAGE,
} from './text.js';

/** Longest accepted `cursor` value. */
export const CURSOR_MAX = 1024;

export const EVENTS_DEFAULT_LIMIT = 12;
export const EVENT_NAME_MAX = 100;
export const EVENT_ID_MAX = 128;
export const MUID_MAX = 128;
export const COLLECT_MAX_EVENTS = 500;

/** Event names the spec lists as common (2.4); any other name of 1..100 characters is accepted too. */
export const STANDARD_EVENT_NAMES = [
  'PageView',
  'Purchase',
  'AddToCart',
  'RemoveFromCart',
  'BeginCheckout',
  'ViewContent',
  'Search',
  'SignUp',
  'Login',
  'Logout',
] as const;

/**
 * The consent state an event was collected under (docs/decisions/consent.md): `not_required` (a tag
 * in mode `none`, `POST /v1/collect`, and every event stored before consent existed), `granted`
 * (`ptag('consent', 'granted')`), `implied` (an `opt-out` tag not denied), `cookieless` (no consent:
 * no cookie, the visitor a daily-rotating hash).
 */
export const EventConsent = z
  .enum(['not_required', 'granted', 'implied', 'cookieless'])
  // No schema id: inlined where it is used (the stream's documented frames resolve no nested reference).
  .meta({ description: 'The consent state the event was collected under.' });
export type EventConsent = z.infer<typeof EventConsent>;

/** A tracking event as returned by the event list (spec 2.4). */
export const TrackingEvent = z
  .object({
    id: z
      .string()
      .meta({ description: 'The event id (client-made or assigned at ingestion).', example: 'evt_01HZX3K9QF' }),
    muid: z.string().meta({ description: 'The visitor id the event belongs to.', example: 'muid_7d2f9a' }),
    event_name: z.string().meta({ example: 'Purchase' }),
    event_time: Timestamp,
    raw_data: z.string().meta({ description: 'A JSON document serialised as a string.', example: '{"value":42}' }),
    consent: EventConsent,
  })
  .meta({ id: 'TrackingEvent' });
export type TrackingEvent = z.infer<typeof TrackingEvent>;

/** An ISO 8601 instant the database can store: years 0001-9999 once its offset is applied (dates.ts). */
const isoValue = (what: string) =>
  z
    .string()
    .max(64)
    .superRefine((value, ctx) => {
      if (isCanonicalInstant(value)) return; // the usual form, read without a Date
      const read = readIsoInstant(value);
      if (read === 'format') {
        ctx.addIssue({
          code: 'custom',
          message: `${what} must be an ISO 8601 date (2026-11-22) or date-time (2026-11-22T10:00:00Z)`,
        });
      } else if (read === 'range') {
        ctx.addIssue({ code: 'custom', message: `${what} ${INSTANT_RANGE_MESSAGE}` });
      }
    });

/** Splits a comma list of event names: trimmed, empties dropped, duplicates removed. */
export function parseEventNames(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const parts = typeof value === 'string' ? value.split(',') : value.flatMap((v) => v.split(','));
  return [...new Set(parts.map((part) => part.trim()).filter((part) => part.length > 0))];
}

/** At most this many distinct names in an events filter (the event list's and the stream's). */
export const EVENT_FILTER_MAX_NAMES = 50;

/** The events filter as a query parameter: a comma list, e.g. `PageView,Purchase`. */
export const EventNamesParam = z.string().max(4000);

/**
 * The events filter of the event list and the event stream, the one place its rule lives: a
 * comma list (or, over tRPC, a list of names) -> distinct trimmed names, at most
 * EVENT_FILTER_MAX_NAMES, each at most EVENT_NAME_MAX characters. Absent: `[]` (all events).
 */
export const EventNamesFilter = z
  .union([EventNamesParam, z.array(z.string()).max(EVENT_FILTER_MAX_NAMES)])
  .optional()
  .transform((value, ctx) => {
    const names = parseEventNames(value);
    if (names.length > EVENT_FILTER_MAX_NAMES) {
      ctx.addIssue({ code: 'custom', message: `at most ${EVENT_FILTER_MAX_NAMES} event names` });
    } else if (names.some((name) => name.length > EVENT_NAME_MAX)) {
      ctx.addIssue({ code: 'custom', message: `names are at most ${EVENT_NAME_MAX} characters` });
    }
    return names;
  });

export const SortOrder = z.enum(['asc', 'desc']);
export const EventSortBy = z.enum(['event_time', 'event_name']);

export const ListEventsQuery = z
  .object({
    merchantId: Uuid.meta({
      description: 'The merchant whose events to list (UUID, one of the partner’s merchants).',
      example: '3f2b6c1e-8a4d-4c7e-9b1a-2d5e6f7a8b9c',
    }),
    ...paginationQuery(EVENTS_DEFAULT_LIMIT),
    sortOrder: SortOrder.default('desc').meta({ description: '`asc` or `desc` (default `desc`, newest first).' }),
    sortBy: EventSortBy.default('event_time').meta({
      description: 'Sort key, `event_time` (default) or `event_name`; ties are broken by the event id.',
    }),
    events: EventNamesParam.meta({
      description: `Comma-separated event names to keep (spaces around names ignored, at most ${EVENT_FILTER_MAX_NAMES} names); all events when absent.`,
      example: 'PageView,Purchase',
    }).optional(),
    muid: VisitorId.meta({
      description: "Only this visitor's events (e.g. to answer a visitor's access request).",
      example: 'muid_7d2f9a',
    }).optional(),
    startDate: isoValue('startDate')
      .meta({
        description:
          'Inclusive start, ISO 8601 UTC: a date (`2026-11-01`, from 00:00) or a date-time (`2026-11-01T08:00:00Z`; no offset means UTC).',
        example: '2026-11-01',
      })
      .optional(),
    endDate: isoValue('endDate')
      .meta({
        description:
          'Inclusive end, ISO 8601 UTC: a date (`2026-11-30`, covers its whole day) or a date-time (`2026-11-30T18:00:00Z`).',
        example: '2026-11-30',
      })
      .optional(),
    cursor: z
      .string()
      .min(1)
      .max(CURSOR_MAX)
      .meta({
        description:
          'Opaque position from `pagination.nextCursor` of the previous page: the next page by keyset, the same cost at any depth, ' +
          'stable while events are inserted (no event skipped or repeated). Send the same merchantId, sort and filters as the page ' +
          'it came from (otherwise 400 VALIDATION_ERROR); `page` is then ignored, `limit` may change.',
        example: 'WzEsMiwiMjAyNi0xMS0yMlQxMDowMDowMC4wMDBaIiwiZXZ0LTEiXQ.q2b1cXy0m2jv3dE5gQnN1A',
      })
      .optional(),
  })
  .meta({ id: 'ListEventsQuery' });
export type ListEventsQuery = z.input<typeof ListEventsQuery>;

/** The event list's pagination: the primary envelope plus `nextCursor`. */
export const EventsPagination = Pagination.extend({
  nextCursor: z.string().nullable().meta({
    description:
      'Pass as `cursor` to get the next page (keyset: every page costs the same, stable under inserts); null on the last page.',
    example: 'WzEsMiwiMjAyNi0xMS0yMlQxMDowMDowMC4wMDBaIiwiZXZ0LTEiXQ.q2b1cXy0m2jv3dE5gQnN1A',
  }),
}).meta({ id: 'EventsPagination' });
export type EventsPagination = z.infer<typeof EventsPagination>;

export const ListEventsResponse = z
  .object({
    events: z.array(TrackingEvent),
    pagination: EventsPagination,
  })
  .meta({ id: 'ListEventsResponse' });
export type ListEventsResponse = z.infer<typeof ListEventsResponse>;

/** `GET /v1/partners/events/export`: the list's filters and sort, no pages; `afterId` resumes a cut download. */
export const ExportEventsQuery = ListEventsQuery.omit({ page: true, limit: true })
  .extend({
    afterId: z
      .string()
      .min(1)
      .max(EVENT_ID_MAX)
      .meta({
        description:
          'Resume a cut download: the `id` of the last event line received (same filters and sort); the export continues after it.',
        example: 'evt_01HZX3K9QF',
      })
      .optional(),
  })
  .meta({ id: 'ExportEventsQuery' });
export type ExportEventsQuery = z.input<typeof ExportEventsQuery>;

/** The last line of a complete export (a line without `complete: true` at the end means the download was cut). */
export const ExportSummary = z
  .object({
    complete: z.literal(true),
    count: z.number().int().min(0).meta({ description: 'Event lines in this response.' }),
    cursor: z.string().nullable().meta({
      description:
        'Position after the last event exported: pass as `cursor` to a later export (or the list) to get only what sorts after it.',
    }),
  })
  .meta({ id: 'ExportSummary' });
export type ExportSummary = z.infer<typeof ExportSummary>;

export const EventName = z
  .string()
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(EVENT_NAME_MAX, { message: `must be at most ${EVENT_NAME_MAX} characters` })
  .refine(isWellFormedText, { message: WELL_FORMED_MESSAGE })
  .refine(isNulFree, { message: NUL_MESSAGE });

/** One event sent to the collector. */
export const CollectEvent = z.object({
  id: z
    .string()
    .min(1)
    .max(EVENT_ID_MAX)
    .refine(isWellFormedText, { message: WELL_FORMED_MESSAGE })
    .refine(isNulFree, { message: NUL_MESSAGE })
    .optional()
    .meta({
      description:
        'Client-made id (1..128 characters); an id already stored for the merchant is dropped, so a retried batch is stored once.',
      example: 'evt_01HZX3K9QF',
    }),
  event_name: EventName.meta({
    description: 'The event name, 1..100 characters (e.g. `PageView`, `Purchase`, `AddToCart`).',
    example: 'Purchase',
  }),
  event_time: isoValue('event_time').optional().meta({
    description:
      'When the event happened, ISO 8601: a date-time (`2026-11-22T10:00:00Z`; no offset means UTC) or a date, within years 0001-9999 in UTC (more: 400 VALIDATION_ERROR). Defaults to the time of receipt.',
    example: '2026-11-22T10:00:00Z',
  }),
  muid: z
    .string()
    .min(1)
    .max(MUID_MAX)
    .refine(isWellFormedText, { message: WELL_FORMED_MESSAGE })
    .refine(isNulFree, { message: NUL_MESSAGE })
    .optional()
    .meta({ description: 'The visitor id (1..128 characters); one is assigned when absent.', example: 'muid_7d2f9a' }),
  data: z
    .unknown()
    // Every string and key, however nested: a U+0000 in stored JSON breaks each later cast to jsonb.
    .superRefine((data, ctx) => {
      const problem = deepTextProblem(data);
      if (problem) ctx.addIssue({ code: 'custom', message: problem === 'nul' ? NUL_MESSAGE : WELL_FORMED_MESSAGE });
    })
    .refine((data) => data === undefined || (JSON.stringify(data)?.length ?? 0) <= EVENT_DATA_MAX_CHARS, {
      message: `must be at most ${EVENT_DATA_MAX_CHARS} characters as JSON`,
    })
    .optional()
    .meta({
      description: `Any JSON value of at most ${EVENT_DATA_MAX_CHARS} characters serialized (16 KB; more: 400 VALIDATION_ERROR), no U+0000 in any string or key (400); returned as the \`raw_data\` string.`,
      example: { value: 42, currency: 'EUR' },
    }),
});
export type CollectEvent = z.input<typeof CollectEvent>;

export const CollectInput = z
  .object({
    tagId: Uuid.meta({
      description: 'The live tag the events are for.',
      example: '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
    }),
    events: z
      .array(CollectEvent)
      .min(1)
      .max(COLLECT_MAX_EVENTS)
      .meta({ description: '1..500 events (more: 400 VALIDATION_ERROR; the whole body at most 1 MB: 413).' }),
  })
  .meta({ id: 'CollectInput' });
export type CollectInput = z.input<typeof CollectInput>;

/** What the tag script says of the visitor's consent with a batch to its collector (`POST /e`). */
export const TagConsentSignal = z.enum(['granted', 'implied', 'cookieless', 'denied']);
export type TagConsentSignal = z.infer<typeof TagConsentSignal>;

/**
 * A batch of the tag script (`POST /e` on the collector host): `CollectInput` and the consent the
 * script collected it under. `denied` carries no events: it asks the collector to clear the cookie.
 */
export const TagBatchInput = z
  .object({
    tagId: CollectInput.shape.tagId,
    consent: TagConsentSignal.optional(),
    events: z.array(CollectEvent).max(COLLECT_MAX_EVENTS),
    /** When the script sent the batch, by the page's clock (ms since 1970): how far off that clock is. */
    sentAt: z.number().int().min(0).max(MAX_INSTANT_MS).optional(),
  })
  .refine((batch) => batch.consent === 'denied' || batch.events.length > 0, {
    message: 'must hold at least 1 event',
    path: ['events'],
  });
export type TagBatchInput = z.infer<typeof TagBatchInput>;

export const CollectResponse = z
  .object({
    accepted: z.number().int().min(0).meta({
      example: 2,
      description:
        'Events accepted from this request. Events whose id is already stored are accepted and dropped (idempotent).',
    }),
  })
  .meta({ id: 'CollectResponse' });
export type CollectResponse = z.infer<typeof CollectResponse>;

/** An event as the real-time stream sends it: the event list's fields plus `seq` (the SSE id). */
export const StreamedEvent = TrackingEvent.extend({
  seq: z.number().int().min(1).meta({ description: 'Ingestion order; the stream resumes after it.' }),
}).meta({ id: 'StreamedEvent' });
export type StreamedEvent = z.infer<typeof StreamedEvent>;

/**
 * What opens an event stream (`GET /v1/partners/events/stream` and the tRPC subscription
 * `events.stream`): the merchant, the events filter, and where to resume. `lastEventId` is the
 * `seq` of the last event seen (SSE `Last-Event-ID`); absent: only events from now on.
 */
export const StreamEventsQuery = z.object({
  merchantId: Uuid,
  events: EventNamesFilter,
  lastEventId: z.string().max(32).nullish(),
});
export type StreamEventsQuery = z.input<typeof StreamEventsQuery>;
