// Its own file so pagination and the transport both import it without importing each other.

/** Header values; `null` removes a header set at a lower level (client defaults). */
export type HeadersRecord = Record<string, string | null | undefined>;

/**
 * Options accepted by every method as its last argument (lists, streams and exports included);
 * they override the client's for that call, on every request it makes (each page, each attempt,
 * each reconnection).
 */
export interface RequestOptions {
  /**
   * Retries after the first attempt (default: the client's, 2). `events.stream()`: failed
   * connections in a row before it throws (default: never give up).
   */
  maxRetries?: number;
  /**
   * Per-attempt timeout in ms (default: the client's, 60 000). `events.stream()` and
   * `events.export()`: the wait for the response head (the body may take longer).
   */
  timeout?: number;
  /** Aborts the call, including the wait between retries (`events.stream()`: ends it quietly). */
  signal?: AbortSignal;
  /**
   * `Idempotency-Key`, sent as given on every request of the call (the API acts on it for POSTs).
   * Without it, a POST gets a UUID made once per call and sent on every attempt.
   */
  idempotencyKey?: string;
  /** Extra headers for this call; `null` removes a header. */
  headers?: HeadersRecord;
}
