import { z } from 'zod';
import { Timestamp, Uuid } from './common.js';
import { parseIsoInstant } from './dates.js';
import { Pagination, paginationQuery } from './pagination.js';

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

/** A tracking event as returned by the event list (spec 2.4). */
export const TrackingEvent = z
  .object({
    id: z.string(),
    muid: z.string(),
    event_name: z.string(),
    event_time: Timestamp,
    raw_data: z.string().meta({ description: 'A JSON document serialised as a string.' }),
  })
  .meta({ id: 'TrackingEvent' });
export type TrackingEvent = z.infer<typeof TrackingEvent>;

const isoValue = (what: string) =>
  z
    .string()
    .max(64)
    .refine((value) => parseIsoInstant(value) !== null, {
      message: `${what} must be an ISO 8601 date (2026-11-22) or date-time (2026-11-22T10:00:00Z)`,
    });

export const SortOrder = z.enum(['asc', 'desc']);
export const EventSortBy = z.enum(['event_time', 'event_name']);

export const ListEventsQuery = z
  .object({
    merchantId: Uuid,
    ...paginationQuery(EVENTS_DEFAULT_LIMIT),
    sortOrder: SortOrder.default('desc'),
    sortBy: EventSortBy.default('event_time'),
    events: z
      .string()
      .max(4000)
      .optional()
      .meta({ description: 'Comma-separated event names to keep, e.g. `PageView,Purchase`.' }),
    startDate: isoValue('startDate').optional().meta({ description: 'Inclusive start (ISO 8601, UTC).' }),
    endDate: isoValue('endDate')
      .optional()
      .meta({ description: 'Inclusive end (ISO 8601, UTC); a date-only value covers its whole day.' }),
  })
  .meta({ id: 'ListEventsQuery' });
export type ListEventsQuery = z.input<typeof ListEventsQuery>;

export const ListEventsResponse = z
  .object({
    events: z.array(TrackingEvent),
    pagination: Pagination,
  })
  .meta({ id: 'ListEventsResponse' });
export type ListEventsResponse = z.infer<typeof ListEventsResponse>;

/** Splits a comma list of event names: trimmed, empties dropped, duplicates removed. */
export function parseEventNames(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const parts = typeof value === 'string' ? value.split(',') : value.flatMap((v) => v.split(','));
  return [...new Set(parts.map((part) => part.trim()).filter((part) => part.length > 0))];
}

export const EventName = z
  .string()
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(EVENT_NAME_MAX, { message: `must be at most ${EVENT_NAME_MAX} characters` });

/** One event sent to the collector. */
export const CollectEvent = z.object({
  id: z
    .string()
    .min(1)
    .max(EVENT_ID_MAX)
    .optional()
    .meta({ description: 'Client-made id; an id already stored for the merchant is dropped (idempotent).' }),
  event_name: EventName,
  event_time: isoValue('event_time').optional().meta({ description: 'Defaults to the time of receipt.' }),
  muid: z.string().min(1).max(MUID_MAX).optional(),
  data: z.unknown().optional().meta({ description: 'Any JSON value; returned as the `raw_data` string.' }),
});
export type CollectEvent = z.input<typeof CollectEvent>;

export const CollectInput = z
  .object({
    tagId: Uuid,
    events: z.array(CollectEvent).min(1).max(COLLECT_MAX_EVENTS),
  })
  .meta({ id: 'CollectInput' });
export type CollectInput = z.input<typeof CollectInput>;

export const CollectResponse = z
  .object({
    accepted: z.number().int().min(0).meta({
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
