import { PartnerError } from './errors.js';
import { parseRateLimit, type RateLimit } from './rate-limit.js';

/** A 2xx answer as the transport received it. @internal */
export interface RawResponse {
  /** The response; its body has been read (into `text`). */
  readonly response: Response;
  /** The full body text. */
  readonly text: string;
  /** A copy with its body unread, made when `asResponse()` was called before the answer arrived. */
  readonly unread: Response | undefined;
  /** When the response head arrived (ms since the epoch): `rateLimit.resetAt` counts from it. */
  readonly receivedAt: number;
}

/** What a call wants from its answer, read when a 2xx head arrives. @internal */
export interface ResponseWants {
  /** `asResponse()` was called: keep a copy of the response with its body unread. */
  unreadBody: boolean;
}

/** What `.withResponse()` resolves to: the parsed data and what came with it. */
export interface WithResponse<T> {
  /** The parsed body, as the call itself resolves. */
  data: T;
  /** The HTTP response (its body already read by the SDK: use `asResponse()` to read it yourself). */
  response: Response;
  /** The `x-request-id` response header: quote it when asking for support. `null` if absent. */
  requestId: string | null;
  /** The rate-limit state the response announced; `undefined` when it sent no rate-limit headers. */
  rateLimit: RateLimit | undefined;
}

/** The metadata of a response: its request id and rate-limit state. @internal */
function responseMeta(raw: Pick<RawResponse, 'response' | 'receivedAt'>): Omit<WithResponse<never>, 'data'> {
  return {
    response: raw.response,
    requestId: raw.response.headers.get('x-request-id'),
    rateLimit: parseRateLimit(raw.response.headers, raw.receivedAt),
  };
}

/** Only blanks (or nothing): tested from the start, so a JSON body answers at its first character. */
const BLANK = /^\s*$/;

/** The parsed JSON body of a 2xx answer (`undefined` when it is empty). @internal */
export function parseBody<T>(raw: RawResponse): T {
  if (BLANK.test(raw.text)) return undefined as T;
  try {
    return JSON.parse(raw.text) as T;
  } catch (error) {
    const requestId = raw.response.headers.get('x-request-id');
    throw new PartnerError(
      `The server answered ${raw.response.status} with a body that is not JSON${requestId ? ` (request id ${requestId})` : ''}.`,
      { cause: error },
    );
  }
}

/**
 * The response with its body unread: the copy kept for `asResponse()`, else (asked for once the
 * answer was in) one with the same status, headers and body bytes. @internal
 */
export function unreadResponse(raw: RawResponse): Response {
  if (raw.unread) return raw.unread;
  const { status, statusText, headers } = raw.response;
  // 204/205/304 take no body at all.
  const body = raw.text === '' || status === 204 || status === 205 || status === 304 ? null : raw.text;
  return new Response(body, { status, statusText, headers });
}

/**
 * What every method returns (except `list()`, which returns a {@link PagePromise}, and the
 * streams): a `Promise` of the parsed data, so `await client.merchants.create(...)` works as
 * always, with two more ways to read the answer:
 *
 * - `.withResponse()`: `{ data, response, requestId, rateLimit }`;
 * - `.asResponse()`: the raw `Response`, its body unread (nothing is parsed).
 *
 * The request starts when the method is called, whichever of these is used; a failed call
 * rejects each of them with the same error.
 */
export class APIPromise<T> extends Promise<T> {
  readonly #raw: Promise<RawResponse>;
  readonly #parse: (raw: RawResponse) => T;
  readonly #wants: ResponseWants;
  #parsed: Promise<T> | undefined;

  // Derived promises (`then`, `catch`, `finally`) are plain ones, never an APIPromise.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  /** @internal */
  constructor(raw: Promise<RawResponse>, parse: (raw: RawResponse) => T, wants: ResponseWants) {
    // The base promise is never used: `then` & co. read `#data()`, which starts parsing only when
    // asked (an `asResponse()` caller parses nothing, and an unread rejection is never unhandled twice).
    super((resolve) => resolve(undefined as T));
    this.#raw = raw;
    this.#parse = parse;
    this.#wants = wants;
  }

  /** The same call, its data mapped by `transform`. @internal */
  _thenUnwrap<U>(transform: (data: T) => U): APIPromise<U> {
    return new APIPromise(this.#raw, (raw) => transform(this.#parse(raw)), this.#wants);
  }

  #data(): Promise<T> {
    this.#parsed ??= this.#raw.then(this.#parse);
    return this.#parsed;
  }

  /** The parsed data with the response, its `x-request-id` and its rate-limit state. */
  async withResponse(): Promise<WithResponse<T>> {
    const raw = await this.#raw;
    const data = await this.#data();
    return { data, ...responseMeta(raw) };
  }

  /**
   * The raw `Response` of the call (after its retries), with its body unread: read it yourself.
   * Nothing is parsed. A non-2xx answer still rejects with its `APIError`.
   */
  asResponse(): Promise<Response> {
    this.#wants.unreadBody = true;
    return this.#raw.then(unreadResponse);
  }

  // biome-ignore lint/suspicious/noThenProperty: a Promise subclass.
  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    // biome-ignore lint/suspicious/noExplicitAny: Promise's own signature (code written against Promise<T> compiles).
    onrejected?: ((reason: any) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#data().then(onfulfilled, onrejected);
  }

  override catch<R = never>(
    // biome-ignore lint/suspicious/noExplicitAny: Promise's own signature (code written against Promise<T> compiles).
    onrejected?: ((reason: any) => R | PromiseLike<R>) | null,
  ): Promise<T | R> {
    return this.#data().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#data().finally(onfinally);
  }
}
