import type { APIPromise } from '../core/api-promise.js';
import { type PagePromise, paginate } from '../core/pagination.js';
import type { RequestOptions, Transport } from '../core/request.js';
import { makeIdempotencyKey } from '../internal/idempotency.js';
import { buildQuery } from '../internal/query.js';
import { EventExport, type EventExportOptions, type EventExportParams } from './event-export.js';
import { EventStream, type EventStreamOptions, type EventStreamParams } from './event-stream.js';
import { type TrackingEvent, withData } from './tracking-event.js';

export interface EventListParams {
  merchantId: string;
  /** Page to start from (1-based, default 1). Iteration continues from it. */
  page?: number;
  /** Items per page, 1..100 (server default 12). */
  limit?: number;
  /** Default `event_time`. */
  sortBy?: 'event_time' | 'event_name';
  /** Default `desc`. */
  sortOrder?: 'asc' | 'desc';
  /** Event names to keep: an array or a comma-separated string. */
  events?: readonly string[] | string;
  /** Only this visitor's events (e.g. to answer a visitor's access request). */
  muid?: string;
  /** Inclusive start: a `Date` or an ISO 8601 string. */
  startDate?: Date | string;
  /** Inclusive end: a `Date` or an ISO 8601 string (a date-only string covers its whole UTC day). */
  endDate?: Date | string;
  /**
   * Start after this cursor (a page's `pagination.nextCursor`, made for the same merchant, sort and
   * filters). Iteration follows the server's cursors from page to page either way.
   */
  cursor?: string;
}

/** One server-side event for `client.events.send`. */
export interface EventInput {
  /**
   * The event's id, 1..128 characters: an id already stored for the merchant is dropped, so a
   * retried send stores each event once. Default: one made by the SDK before the first attempt.
   */
  id?: string;
  /** 1..100 characters, e.g. `PageView`, `Purchase`. */
  event_name: string;
  /** When it happened: a `Date` or an ISO 8601 string (default: the time the server receives it). */
  event_time?: Date | string;
  /** The visitor id, 1..128 characters (default: one assigned by the server). */
  muid?: string;
  /** Any JSON value; read back as the `raw_data` string. */
  data?: unknown;
}

export interface EventSendParams {
  /** A live tag: preverified, or custom once verified. */
  tagId: string;
  /** 1..500 events. */
  events: readonly EventInput[];
}

export interface EventSendResponse {
  /** Events the server accepted (an event whose id was already stored counts as accepted, once). */
  accepted: number;
  /** The id of each event sent, in order (those the SDK made included). */
  ids: string[];
}

/** The server's default page size for events. */
const DEFAULT_LIMIT = 12;

/** `client.events`: `/v1/partners/events`. */
export class Events {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * `POST /v1/collect`: sends server-side events for a live tag. Every event gets its id before the
   * first attempt, so retries (a dropped connection, a 503 while the server is busy) store each
   * event once.
   */
  send(params: EventSendParams, options?: RequestOptions): APIPromise<EventSendResponse> {
    let events: (EventInput & { id: string })[];
    try {
      events = params.events.map((event) => ({
        ...event,
        id: event.id ?? `evt_${makeIdempotencyKey()}`,
        ...(event.event_time instanceof Date ? { event_time: event.event_time.toISOString() } : {}),
      }));
    } catch (error) {
      // As before this returned an APIPromise: a bad argument rejects, it does not throw.
      return this.#transport.failed(error);
    }
    return this.#transport
      .post<{ accepted: number }>('/v1/collect', { tagId: params.tagId, events }, options)
      ._thenUnwrap((response) => ({ accepted: response.accepted, ids: events.map((event) => event.id) }));
  }

  /**
   * `GET /v1/partners/events/stream`: the merchant's events as they are ingested, as an async
   * iterable (`for await (const event of client.events.stream({ merchantId }, { signal }))`).
   * Reconnects with backoff and the last event id; ends when `signal` aborts.
   */
  stream(params: EventStreamParams, options?: EventStreamOptions): EventStream {
    return new EventStream(this.#transport, params, options);
  }

  /**
   * `GET /v1/partners/events/export`: every matching event as a stream (NDJSON, constant memory):
   * `for await (const event of client.events.export({ merchantId }))`; `.raw()` for the bytes,
   * `.summary` once complete. A cut download throws; resume with `afterId` (see {@link EventExport}).
   */
  export(params: EventExportParams, options?: EventExportOptions): EventExport {
    return new EventExport(this.#transport, params, options);
  }

  /** `GET /v1/partners/events`: a page of a merchant's events, iterable over all matching events. */
  list(params: EventListParams, options?: RequestOptions): PagePromise<TrackingEvent> {
    const start = params.page ?? 1;
    return paginate<TrackingEvent>(
      {
        itemsKey: 'events',
        limit: params.limit ?? DEFAULT_LIMIT,
        idOf: (event) => event.id,
        prepare: withData,
        prefetch: this.#transport.prefetchPages,
        fetch: (page, cursor, hooks) =>
          this.#transport.getPage(
            '/v1/partners/events',
            buildQuery({
              merchantId: params.merchantId,
              cursor: cursor ?? undefined,
              page: cursor ? undefined : page === start ? params.page : page,
              limit: params.limit,
              sortBy: params.sortBy,
              sortOrder: params.sortOrder,
              events: typeof params.events === 'string' ? params.events.split(',') : params.events,
              muid: params.muid,
              startDate: params.startDate,
              endDate: params.endDate,
            }),
            options,
            hooks,
          ),
      },
      start,
      params.cursor ?? null,
    );
  }
}
