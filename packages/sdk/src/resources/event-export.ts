import { APIConnectionError, APIUserAbortError, PartnerError } from '../core/errors.js';
import { makeAPIError } from '../core/make-error.js';
import { callHeaders, type RequestOptions, type Transport } from '../core/request.js';
import { isRetryableStatus, retryDelayMs } from '../core/retry.js';
import { buildQuery } from '../internal/query.js';
import { type TrackingEvent, withData } from './tracking-event.js';

export interface EventExportParams {
  merchantId: string;
  /** Default `event_time`. */
  sortBy?: 'event_time' | 'event_name';
  /** Default `desc`; `asc` for an incremental sync (the final cursor then continues with newer events). */
  sortOrder?: 'asc' | 'desc';
  /** Event names to keep: an array or a comma-separated string. */
  events?: readonly string[] | string;
  /** Only this visitor's events (e.g. to answer a visitor's access request). */
  muid?: string;
  /** Inclusive start: a `Date` or an ISO 8601 string. */
  startDate?: Date | string;
  /** Inclusive end: a `Date` or an ISO 8601 string. */
  endDate?: Date | string;
  /** Continue after a position: the `cursor` of an earlier export's summary, or a list page's `nextCursor`. */
  cursor?: string;
  /** Resume a cut download after this event id (the last event received). */
  afterId?: string;
}

/**
 * `events.export()`'s options: the shared {@link RequestOptions}. `timeout` is the wait for the
 * response head (the body may take longer); `maxRetries` retries the opening only (before the
 * first event; a cut download resumes with `afterId`).
 */
export type EventExportOptions = RequestOptions;

/** The last line of a complete export. */
export interface ExportSummary {
  complete: true;
  /** Events in this export. */
  count: number;
  /** Continues after the last exported event (as `cursor` of a later export, or of the list). */
  cursor: string | null;
}

const EXPORT_PATH = '/v1/partners/events/export';

/**
 * `client.events.export(...)`: every matching event, streamed (NDJSON). Async-iterate it for typed
 * events, in the list's order, with constant memory; `summary` is set once the export completed.
 * A download cut before its final line throws an {@link APIConnectionError} whose message names
 * the last event id: `client.events.export({ ...params, afterId })` continues from there (the
 * iterator's `lastId` holds it too). `raw()` gives the HTTP response itself (its body is the NDJSON
 * stream, gzip-decoded by fetch) to store or pipe the bytes unparsed.
 */
export class EventExport implements AsyncIterable<TrackingEvent> {
  #summary: ExportSummary | null = null;
  #lastId: string | undefined;

  /** @internal */
  constructor(
    private readonly transport: Transport,
    private readonly params: EventExportParams,
    private readonly options: EventExportOptions = {},
  ) {}

  /** The final line, once iteration reached it; `null` before (or for a cut export). */
  get summary(): ExportSummary | null {
    return this.#summary;
  }

  /** The id of the last event delivered (pass as `afterId` to resume). */
  get lastId(): string | undefined {
    return this.#lastId;
  }

  /** Opens the export and returns the HTTP response unread (an error status throws the matching APIError). */
  async raw(): Promise<Response> {
    const p = this.params;
    const query = buildQuery({
      merchantId: p.merchantId,
      sortBy: p.sortBy,
      sortOrder: p.sortOrder,
      events: typeof p.events === 'string' ? p.events.split(',') : p.events,
      muid: p.muid,
      startDate: p.startDate,
      endDate: p.endDate,
      cursor: p.cursor,
      afterId: p.afterId,
    });
    const { signal = new AbortController().signal, timeout } = this.options;
    const headers = { accept: 'application/x-ndjson', ...callHeaders(this.options, false) };
    const maxRetries = this.options.maxRetries ?? this.transport.maxRetries;
    // The opening is retried as any GET is (a connection error, 408, 429, 5xx), with the same waits.
    for (let retriesSoFar = 0; ; retriesSoFar++) {
      let response: Response;
      try {
        response = await this.transport.openStream(EXPORT_PATH, query, signal, headers, timeout);
      } catch (error) {
        if (error instanceof APIUserAbortError || retriesSoFar >= maxRetries) throw error;
        await this.transport.sleep(retryDelayMs(retriesSoFar), signal);
        continue;
      }
      if (response.ok) return response;
      const error = makeAPIError(response.status, await response.text(), response.headers);
      if (!isRetryableStatus(response.status) || retriesSoFar >= maxRetries) throw error;
      await this.transport.sleep(retryDelayMs(retriesSoFar, response.headers), signal);
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<TrackingEvent> {
    const response = await this.raw();
    if (!response.body) throw new PartnerError('The export response has no body.');
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = response.body.getReader();
    try {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          throw this.#cut(error);
        }
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        let newline = buffer.indexOf('\n');
        let start = 0;
        while (newline !== -1) {
          const line = buffer.slice(start, newline);
          start = newline + 1;
          newline = buffer.indexOf('\n', start);
          if (line.length === 0) continue;
          const value = JSON.parse(line) as TrackingEvent | ExportSummary | { complete: false; error: unknown };
          if ('complete' in value) {
            if (value.complete === true) {
              this.#summary = value;
              return;
            }
            throw this.#cut((value as { error?: { message?: string } }).error?.message);
          }
          this.#lastId = value.id;
          yield withData(value);
        }
        buffer = buffer.slice(start);
      }
      throw this.#cut('the body ended without its final line');
    } finally {
      reader.releaseLock();
      await response.body.cancel().catch(() => {});
    }
  }

  #cut(cause: unknown): APIConnectionError {
    const reason = cause instanceof Error ? cause.message : String(cause ?? 'cut');
    const where = this.#lastId === undefined ? 'before the first event' : `after event ${this.#lastId}`;
    return new APIConnectionError(`The export was cut ${where} (${reason}): resume with afterId.`, {
      cause,
    });
  }
}
