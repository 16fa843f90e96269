import { makeIdempotencyKey } from '../internal/idempotency.js';
import { VERSION } from '../version.js';
import { APIPromise, parseBody, type RawResponse, type ResponseWants } from './api-promise.js';
import { APIConnectionError, APIConnectionTimeoutError, APIUserAbortError, PartnerError } from './errors.js';
import { makeAPIError } from './make-error.js';
import type { PageFetchHooks } from './pagination.js';
import type { HeadersRecord, RequestOptions } from './request-options.js';
import { isRetryableStatus, retryDelayMs, type Sleep } from './retry.js';
import type { SessionAuth } from './session-auth.js';

export type { HeadersRecord, RequestOptions } from './request-options.js';

/** A `fetch` implementation (the global one by default). */
export type Fetch = (input: Request | URL | string, init?: RequestInit) => Promise<Response>;

/** The headers a call's options add: its `Idempotency-Key`, then its own `headers` (which win). */
export function callHeaders(options: RequestOptions | undefined, generateKey: boolean): HeadersRecord {
  const key = options?.idempotencyKey ?? (generateKey ? makeIdempotencyKey() : undefined);
  return { 'idempotency-key': key, ...options?.headers };
}

/** What the client hands to the transport. */
export interface TransportConfig {
  apiKey: string;
  baseURL: string;
  maxRetries: number;
  timeout: number;
  fetch: Fetch | undefined;
  headers: HeadersRecord;
  /** The wait between retries and stream reconnections (the client's `sleep` option, else a timer). */
  sleep: Sleep;
  /** Whether list iteration requests the next page while the current one is consumed. */
  prefetchPages: boolean;
  /** A merchant session (`MerchantClient`): its token replaces the API key, renewed as it expires. */
  session?: SessionAuth | undefined;
}

interface APIRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: URLSearchParams | undefined;
  body?: unknown;
  options?: RequestOptions | undefined;
  /** Told a 2xx answer's headers as soon as they arrive (list iteration reads the next page's link). */
  onHead?: ((headers: Headers) => void) | undefined;
  /** What the caller wants of the response (`asResponse()`: a copy with its body unread). */
  wants?: ResponseWants | undefined;
}

const MAX_TIMEOUT_MS = 2_147_483_647;

type KyModule = typeof import('ky');
let kyModule: Promise<KyModule> | undefined;
// A dynamic import keeps the CommonJS build loadable on every Node 20 (ky 1.x is ESM-only).
const loadKy = (): Promise<KyModule> => {
  kyModule ??= import('ky');
  return kyModule;
};

function mergeHeaders(...layers: (HeadersRecord | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const layer of layers) {
    for (const [name, value] of Object.entries(layer ?? {})) {
      const key = name.toLowerCase();
      if (value === null) delete out[key];
      else if (value !== undefined) out[key] = value;
    }
  }
  return out;
}

/**
 * A signal that aborts when `caller` or `own` does, and a way to drop its listeners: the caller's
 * signal may outlive thousands of pages, so nothing may stay attached to it after a request.
 */
function linkSignals(caller: AbortSignal | undefined, own: AbortSignal): { signal: AbortSignal; unlink(): void } {
  if (!caller) return { signal: own, unlink: () => undefined };
  const linked = new AbortController();
  const fromCaller = () => linked.abort(caller.reason);
  const fromOwn = () => linked.abort(own.reason);
  if (caller.aborted) fromCaller();
  else if (own.aborted) fromOwn();
  caller.addEventListener('abort', fromCaller, { once: true });
  own.addEventListener('abort', fromOwn, { once: true });
  return {
    signal: linked.signal,
    unlink: () => {
      caller.removeEventListener('abort', fromCaller);
      own.removeEventListener('abort', fromOwn);
    },
  };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause && (typeof cause.code === 'string' ? cause.code : cause.message);
  return typeof detail === 'string' && detail ? `${error.message} (${detail})` : error.message;
}

/**
 * Sends requests through ky and runs the SDK's own retry loop around it. ky does the request
 * building (`prefixUrl`, JSON body, search params) and the per-attempt timeout; its own retry is
 * off (`retry: 0`) because it never retries POST, ignores `retry-after-ms` and has no jitter.
 * ky's errors never escape: they are mapped to this SDK's classes.
 * @internal
 */
export class Transport {
  // A private field: logging a client must not print the API key.
  readonly #config: TransportConfig;
  /** The client's wait between attempts (streams reconnect through it too). */
  readonly sleep: Sleep;
  /** Whether list iteration requests the next page while the current one is consumed. */
  readonly prefetchPages: boolean;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.sleep = config.sleep;
    this.prefetchPages = config.prefetchPages;
  }

  /** The client's retries after a first attempt (a call's `maxRetries` overrides it). */
  get maxRetries(): number {
    return this.#config.maxRetries;
  }

  /**
   * A GET. `hooks` come from list iteration: `cancel` (the SDK's own abort, beside
   * `options.signal`) and `onHead` (a 2xx answer's headers, before its body is read).
   */
  /** A GET: its parsed body, and `.withResponse()` / `.asResponse()`. */
  get<T>(path: string, query: URLSearchParams, options?: RequestOptions): APIPromise<T> {
    return this.call<T>({ method: 'GET', path, query, options });
  }

  /**
   * A GET of a list page, answered unparsed. `hooks` come from list iteration: `cancel` (the SDK's
   * own abort, beside `options.signal`), `onHead` (a 2xx answer's headers, before its body is
   * read) and `wants` (the first page's `asResponse()`).
   */
  async getPage(
    path: string,
    query: URLSearchParams,
    options?: RequestOptions,
    hooks?: PageFetchHooks,
  ): Promise<RawResponse> {
    const onHead = hooks?.onHead;
    const wants = hooks?.wants;
    // A page method's own options (`getNextPage(options)`...) over the list call's.
    if (hooks?.options) {
      options = { ...options, ...hooks.options, headers: { ...options?.headers, ...hooks.options.headers } };
    }
    if (!hooks?.cancel) return this.request({ method: 'GET', path, query, options, onHead, wants });
    const linked = linkSignals(options?.signal, hooks.cancel);
    try {
      return await this.request({
        method: 'GET',
        path,
        query,
        options: { ...options, signal: linked.signal },
        onHead,
        wants,
      });
    } finally {
      linked.unlink();
    }
  }

  post<T>(path: string, body: unknown, options?: RequestOptions): APIPromise<T> {
    return this.call<T>({ method: 'POST', path, body, options });
  }

  /** A PATCH: it sets values, so a retry repeats the same change (retried like a GET, no Idempotency-Key). */
  patch<T>(path: string, body: unknown, options?: RequestOptions): APIPromise<T> {
    return this.call<T>({ method: 'PATCH', path, body, options });
  }

  /** A DELETE (idempotent: retried like a GET). Resolves with nothing on 204. */
  delete<T = void>(path: string, options?: RequestOptions): APIPromise<T> {
    return this.call<T>({ method: 'DELETE', path, options });
  }

  /** Starts a request now; what it resolves to is read when asked (see {@link APIPromise}). */
  call<T>(req: APIRequest): APIPromise<T> {
    const wants: ResponseWants = { unreadBody: false };
    return new APIPromise<T>(this.request({ ...req, wants }), parseBody<T>, wants);
  }

  /** An {@link APIPromise} rejecting with `error` (a call refused before any request). */
  failed<T>(error: unknown): APIPromise<T> {
    return new APIPromise<T>(Promise.reject(error), parseBody<T>, { unreadBody: false });
  }

  /**
   * Opens a streaming GET (Server-Sent Events, NDJSON) once: the timeout (`timeout`, else the
   * client's) covers only the wait for the response head, and the response is handed back unread.
   * Reconnects are the caller's (core/sse.ts).
   */
  async openStream(
    path: string,
    query: URLSearchParams,
    signal: AbortSignal,
    extraHeaders?: HeadersRecord,
    timeoutMs?: number,
  ): Promise<Response> {
    const headers = mergeHeaders(
      {
        accept: 'text/event-stream',
        authorization: `Bearer ${this.#config.apiKey}`,
        'x-partner-sdk': `partner-sdk-ts/${VERSION}`,
      },
      this.#config.headers,
      extraHeaders,
    );
    // An already aborted signal fires no 'abort' event: nothing is sent.
    if (signal.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
    const head = new AbortController();
    const onAbort = () => head.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const timeout = Math.min(timeoutMs ?? this.#config.timeout, MAX_TIMEOUT_MS);
    const timer = setTimeout(() => head.abort(new Error('timeout')), timeout);
    const fetchImpl = this.#config.fetch ?? globalThis.fetch;
    const search = query.toString();
    const url = `${this.#config.baseURL}/${path.replace(/^\/+/, '')}${search ? `?${search}` : ''}`;
    try {
      return await fetchImpl(url, { method: 'GET', headers, signal: head.signal });
    } catch (error) {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
      if (head.signal.aborted) throw new APIConnectionTimeoutError(`Request timed out after ${timeout} ms.`);
      throw new APIConnectionError(`Connection error: ${describe(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `req`, with retries, and answers the first 2xx response with its body read. */
  async request(req: APIRequest): Promise<RawResponse> {
    const options = req.options ?? {};
    const maxRetries = options.maxRetries ?? this.#config.maxRetries;
    const timeout = Math.min(options.timeout ?? this.#config.timeout, MAX_TIMEOUT_MS);
    const { signal } = options;
    const headers = mergeHeaders(
      {
        accept: 'application/json',
        authorization: `Bearer ${this.#config.apiKey}`,
        'x-partner-sdk': `partner-sdk-ts/${VERSION}`,
        'content-type': req.body === undefined ? undefined : 'application/json',
      },
      this.#config.headers,
      // A generated key is made once per logical call, so that every attempt carries the same key.
      callHeaders(options, req.method === 'POST'),
    );
    const { session } = this.#config;
    if (session) headers.authorization = `Bearer ${await session.token()}`;
    let renewed = false;
    for (let retriesSoFar = 0; ; retriesSoFar++) {
      if (signal?.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
      let raw: RawResponse;
      try {
        raw = await this.attempt(req, headers, timeout, signal);
      } catch (error) {
        if (error instanceof APIUserAbortError || retriesSoFar >= maxRetries) throw error;
        await this.#config.sleep(retryDelayMs(retriesSoFar), signal);
        continue;
      }
      const { status, headers: responseHeaders } = raw.response;
      if (status >= 200 && status < 300) return raw;
      if (status === 401 && session?.renewable && !renewed) {
        // The session ended early (its key revoked, a clock off): renew once, not counted as a retry.
        renewed = true;
        headers.authorization = `Bearer ${await session.token(true)}`;
        retriesSoFar--;
        continue;
      }
      const apiError = makeAPIError(status, raw.text, responseHeaders);
      if (!isRetryableStatus(status) || retriesSoFar >= maxRetries) throw apiError;
      await this.#config.sleep(retryDelayMs(retriesSoFar, responseHeaders), signal);
    }
  }

  /** One attempt: the response and its full body text, or a mapped connection error. */
  private async attempt(
    req: APIRequest,
    headers: Record<string, string>,
    timeout: number,
    signal: AbortSignal | undefined,
  ): Promise<RawResponse> {
    // Per page of a long iteration every object here counts (bench: the SDK against bare fetch):
    // the URL is made here (ky's prefixUrl and searchParams build a Request twice), and ky gets the
    // caller's signal only when there is one (any signal makes ky join it with its own through
    // AbortSignal.any). The body's deadline is a timer the body read listens to, beside the caller's signal.
    const search = req.query?.toString();
    const url = `${this.#config.baseURL}/${req.path.replace(/^\/+/, '')}${search ? `?${search}` : ''}`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let bodyTimedOut = false;
    const started = Date.now();
    const { default: ky, TimeoutError } = await loadKy();
    try {
      const response = await ky(url, {
        method: req.method,
        headers,
        ...(req.body === undefined ? {} : { json: req.body }),
        ...(signal ? { signal } : {}),
        timeout,
        retry: 0,
        throwHttpErrors: false,
        ...(this.#config.fetch ? { fetch: this.#config.fetch } : {}),
      });
      const receivedAt = Date.now();
      if (req.onHead && response.ok) req.onHead(response.headers);
      // Only for `asResponse()`: a copy whose body the caller reads (the SDK reads the original).
      const unread = req.wants?.unreadBody && response.ok ? response.clone() : undefined;
      // ky's timeout covers the wait for the response head; this timer covers reading the body.
      const text = await new Promise<string>((resolve, reject) => {
        const stop = (reason: unknown) => {
          reject(reason);
          response.body?.cancel().catch(() => undefined);
        };
        const onAbort = () => stop(signal?.reason);
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        timer = setTimeout(
          () => {
            bodyTimedOut = true;
            stop(new Error('timeout'));
          },
          Math.max(0, timeout - (Date.now() - started)),
        );
        response
          .text()
          .then(resolve, reject)
          .finally(() => signal?.removeEventListener('abort', onAbort));
      });
      return { response, text, unread, receivedAt };
    } catch (error) {
      if (signal?.aborted) throw new APIUserAbortError(undefined, { cause: signal.reason });
      // ky's TimeoutError is not passed on as the cause: nothing ky-specific leaves the SDK.
      if (error instanceof TimeoutError || bodyTimedOut) {
        throw new APIConnectionTimeoutError(`Request timed out after ${timeout} ms.`);
      }
      if (error instanceof PartnerError) throw error;
      throw new APIConnectionError(`Connection error: ${describe(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}
