import { checkBaseURL, checkCount } from './client.js';
import type { APIPromise } from './core/api-promise.js';
import { PartnerError } from './core/errors.js';
import { type Fetch, type HeadersRecord, type RequestOptions, Transport } from './core/request.js';
import { defaultSleep, type Sleep } from './core/retry.js';
import { SessionAuth, type SessionGrant } from './core/session-auth.js';
import { Stats } from './resources/stats.js';
import { type Tag, Tags } from './resources/tags.js';

export interface MerchantClientOptions {
  /** The API's base URL, e.g. `https://api.example.com` (no environment default: browsers have none). */
  baseURL: string;
  /** A merchant session token (`ms_...`) from your server; optional when `refreshSession` is given. */
  sessionToken?: string | undefined;
  /** When `sessionToken` expires (the `expiresAt` of the created session): it is renewed shortly before. */
  expiresAt?: string | Date | number | undefined;
  /**
   * Fetches a new session from your server (which calls `client.merchants.sessions.create`). Called
   * before the token expires, once after a 401, and first of all when no `sessionToken` is given.
   */
  refreshSession?: (() => Promise<SessionGrant>) | undefined;
  /** Retries after the first attempt of a failed request (default 2). */
  maxRetries?: number | undefined;
  /** Per-attempt timeout in ms (default 60 000). */
  timeout?: number | undefined;
  /** A `fetch` implementation (default: the global `fetch`). */
  fetch?: Fetch | undefined;
  /** Headers sent with every request; `null` removes a default header. */
  headers?: HeadersRecord | undefined;
  /** The wait between retries (default: a timer). */
  sleep?: Sleep | undefined;
}

/** `merchantClient.tags`: the status of the merchant's tags. */
export class MerchantTags {
  readonly #tags: Tags;

  /** @internal */
  constructor(transport: Transport) {
    this.#tags = new Tags(transport);
  }

  /** `GET /v1/partners/tag/{tagId}`: one of the merchant's tags in full (status, record, last check). */
  retrieve(tagId: string, options?: RequestOptions): APIPromise<Tag> {
    return this.#tags.retrieve(tagId, options);
  }
}

/**
 * The client for a browser page: one merchant's statistics and tag status with a merchant session
 * (`ms_...`) that your server created. Only what a session may call is here; the session renews
 * itself through `refreshSession`. On servers, use `PartnerClient` with your API key.
 */
export class MerchantClient {
  readonly baseURL: string;
  readonly maxRetries: number;
  readonly timeout: number;
  /** The merchant's statistics: `/v1/partners/stats/*`. */
  readonly stats: Stats;
  /** The merchant's tags' status: `GET /v1/partners/tag/{tagId}`. */
  readonly tags: MerchantTags;

  constructor(options: MerchantClientOptions) {
    if (!options?.baseURL) throw new PartnerError('No base URL: pass `new MerchantClient({ baseURL })`.');
    if (options.sessionToken?.startsWith('mp_')) {
      throw new PartnerError('An API key (`mp_...`) belongs on your server, in a `PartnerClient`, never in a page.');
    }
    const session = new SessionAuth(options);
    this.baseURL = checkBaseURL(options.baseURL);
    this.maxRetries = checkCount('maxRetries', options.maxRetries ?? 2, 0);
    this.timeout = checkCount('timeout', options.timeout ?? 60_000, 0);
    const transport = new Transport({
      apiKey: '',
      session,
      baseURL: this.baseURL,
      maxRetries: this.maxRetries,
      timeout: this.timeout,
      fetch: options.fetch,
      headers: { ...options.headers },
      sleep: options.sleep ?? defaultSleep,
      prefetchPages: false,
    });
    this.stats = new Stats(transport);
    this.tags = new MerchantTags(transport);
  }
}
