import { callHeaders, type RequestOptions, type Transport } from '../core/request.js';
import { reconnectingSSE } from '../core/sse.js';
import { buildQuery } from '../internal/query.js';
import { type TrackingEvent, withData } from './tracking-event.js';

/** A streamed event: the event list's fields plus `seq`, its ingestion-order id. */
export interface StreamedEvent extends TrackingEvent {
  /** Ingestion order (also the stream's event id): a stream resumed after it continues from there. */
  seq: number;
}

export interface EventStreamParams {
  merchantId: string;
  /** Event names to keep: an array or a comma-separated string. */
  events?: readonly string[] | string;
  /** Resume after this event id (a `seq` as a string); default: events from now on. */
  lastEventId?: string;
}

/**
 * `events.stream()`'s options: the shared {@link RequestOptions}. `signal` ends the stream quietly;
 * `maxRetries` counts failed connections in a row (default: never give up); `timeout` is the wait
 * for each connection's response head (a timeout reconnects); `headers` and `idempotencyKey` go
 * with every connection.
 */
export type EventStreamOptions = RequestOptions;

const STREAM_PATH = '/v1/partners/events/stream';

/**
 * `client.events.stream(...)`: an async iterable of a merchant's events as they are ingested.
 * Reconnects with backoff and `Last-Event-ID` after a dropped connection, a server restart or a
 * "too slow" cut-off, so events arrive once each, in ingestion order. Ends when `signal` aborts or
 * the loop breaks; throws an {@link APIError} that retrying cannot fix (401, 404, 400).
 */
export class EventStream implements AsyncIterable<StreamedEvent> {
  #lastEventId: string | undefined;

  /** @internal */
  constructor(
    private readonly transport: Transport,
    private readonly params: EventStreamParams,
    private readonly options: EventStreamOptions = {},
  ) {
    this.#lastEventId = params.lastEventId;
  }

  /** The id of the last event delivered (pass it as `lastEventId` to resume later). */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamedEvent> {
    const query = buildQuery({
      merchantId: this.params.merchantId,
      events: typeof this.params.events === 'string' ? this.params.events.split(',') : this.params.events,
    });
    const messages = reconnectingSSE(
      {
        open: (lastEventId, signal) =>
          this.transport.openStream(
            STREAM_PATH,
            query,
            signal,
            {
              ...callHeaders(this.options, false),
              ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
            },
            this.options.timeout,
          ),
      },
      {
        signal: this.options.signal,
        maxRetries: this.options.maxRetries,
        lastEventId: this.#lastEventId,
        sleep: this.transport.sleep,
      },
    );
    for await (const message of messages) {
      if (message.event !== 'event') continue;
      const event = withData(JSON.parse(message.data) as StreamedEvent);
      if (message.id !== undefined) this.#lastEventId = message.id;
      yield event;
    }
  }
}
