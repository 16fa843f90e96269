import { type PagePromise, paginate } from '../core/pagination.js';
import type { RequestOptions, Transport } from '../core/request.js';
import { buildQuery } from '../internal/query.js';
import { EventStream, type EventStreamOptions, type EventStreamParams } from './event-stream.js';

/** A tracking event (spec 2.4). */
export interface TrackingEvent {
  id: string;
  /** Tracking user id: the same value across events identifies one user. */
  muid: string;
  event_name: string;
  /** ISO 8601, UTC. */
  event_time: string;
  /** A JSON document serialised as a string: `JSON.parse` it. */
  raw_data: string;
}

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
  /** Inclusive start: a `Date` or an ISO 8601 string. */
  startDate?: Date | string;
  /** Inclusive end: a `Date` or an ISO 8601 string (a date-only string covers its whole UTC day). */
  endDate?: Date | string;
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
   * `GET /v1/partners/events/stream`: the merchant's events as they are ingested, as an async
   * iterable (`for await (const event of client.events.stream({ merchantId }, { signal }))`).
   * Reconnects with backoff and the last event id; ends when `signal` aborts.
   */
  stream(params: EventStreamParams, options?: EventStreamOptions): EventStream {
    return new EventStream(this.#transport, params, options);
  }

  /** `GET /v1/partners/events`: a page of a merchant's events, iterable over all matching events. */
  list(params: EventListParams, options?: RequestOptions): PagePromise<TrackingEvent> {
    const start = params.page ?? 1;
    return paginate<TrackingEvent>(
      {
        itemsKey: 'events',
        limit: params.limit ?? DEFAULT_LIMIT,
        idOf: (event) => event.id,
        fetch: (page) =>
          this.#transport.get(
            '/v1/partners/events',
            buildQuery({
              merchantId: params.merchantId,
              page: page === start ? params.page : page,
              limit: params.limit,
              sortBy: params.sortBy,
              sortOrder: params.sortOrder,
              events: typeof params.events === 'string' ? params.events.split(',') : params.events,
              startDate: params.startDate,
              endDate: params.endDate,
            }),
            options,
          ),
      },
      start,
    );
  }
}
