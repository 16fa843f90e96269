import { PartnerError } from './core/errors.js';
import { type Fetch, type HeadersRecord, Transport } from './core/request.js';
import { defaultSleep, type Sleep } from './core/retry.js';
import { readEnv } from './internal/env.js';
import { Erasures } from './resources/erasures.js';
import { Events } from './resources/events.js';
import { Merchants } from './resources/merchants.js';
import { Settings } from './resources/settings.js';
import { Stats } from './resources/stats.js';
import { Tags } from './resources/tags.js';
import { TestHelpers } from './resources/test-helpers.js';
import { Webhooks } from './resources/webhooks.js';

export interface ClientOptions {
  /** API key (`mp_live_...`). Defaults to `process.env.PARTNER_API_KEY` where `process` exists. */
  apiKey?: string | undefined;
  /** e.g. `https://api.example.com`. Defaults to `process.env.PARTNER_BASE_URL` where `process` exists. */
  baseURL?: string | undefined;
  /** Retries after the first attempt of a failed request (default 2). */
  maxRetries?: number | undefined;
  /** Per-attempt timeout in ms (default 60 000). */
  timeout?: number | undefined;
  /** A `fetch` implementation (default: the global `fetch`). */
  fetch?: Fetch | undefined;
  /** Headers sent with every request; `null` removes a default header. */
  headers?: HeadersRecord | undefined;
  /**
   * The wait between retries and stream reconnections: `(ms, signal) => Promise<void>`, rejecting
   * promptly when `signal` aborts (default: a timer). For tests that must not wait.
   */
  sleep?: Sleep | undefined;
  /**
   * While a list is iterated (`for await`, `iterPages()`, `toArray()`), request the next page as
   * soon as a page arrives, so that work on one page overlaps the round trip for the next
   * (default true). At most one page is fetched ahead; leaving a loop early aborts it.
   */
  prefetchPages?: boolean | undefined;
  /**
   * Lets the client run in a browser page with an API key. Don't: a key reads every merchant of
   * the partner and anyone who opens the page can read it. Browsers use a `MerchantClient` with a
   * merchant session instead.
   */
  dangerouslyAllowBrowser?: boolean | undefined;
}

/** True in a browser page (a window with a document), where an API key would be exposed. */
function inBrowser(): boolean {
  const scope = globalThis as { window?: unknown; document?: unknown };
  return typeof scope.window === 'object' && scope.window !== null && typeof scope.document === 'object';
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 60_000;

/** @internal */
export function checkCount(name: string, value: number, min: number): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < min) {
    throw new PartnerError(`\`${name}\` must be a number >= ${min}, got ${String(value)}.`);
  }
  return value;
}

/** @internal */
export function checkBaseURL(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('not http(s)');
  } catch {
    throw new PartnerError(`\`baseURL\` must be an absolute http(s) URL, got ${JSON.stringify(value)}.`);
  }
  return value.replace(/\/+$/, '');
}

/** The Partner Tags API client. */
export class PartnerClient {
  readonly baseURL: string;
  readonly maxRetries: number;
  readonly timeout: number;
  /** `/v1/partners/merchant` */
  readonly merchants: Merchants;
  /** `/v1/partners/tag/*`: generate, verify, retrieve */
  readonly tags: Tags;
  /** `/v1/partners/events`, `/v1/partners/events/stream`, `/v1/collect` */
  readonly events: Events;
  /** `/v1/partners/webhooks/*`, and `unwrap` to verify what they send */
  readonly webhooks: Webhooks;
  /** A merchant's statistics: `/v1/partners/stats/*`. */
  readonly stats: Stats;
  /** `/v1/partners/erasures`: erase a visitor's events */
  readonly erasures: Erasures;
  /** `/v1/partners/test/*`: test mode's helpers (an `mp_test_` key only) */
  readonly testHelpers: TestHelpers;
  /** `/v1/partners/settings`: the partner's default retention */
  readonly settings: Settings;
  readonly #options: ClientOptions;
  readonly #apiKey: string;

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? readEnv('PARTNER_API_KEY');
    if (!apiKey) {
      throw new PartnerError(
        'No API key: pass `new PartnerClient({ apiKey })` or set the PARTNER_API_KEY environment variable.',
      );
    }
    if (apiKey.startsWith('ms_')) {
      throw new PartnerError('A merchant session token (`ms_...`) goes to `new MerchantClient({ sessionToken })`.');
    }
    if (inBrowser() && !options.dangerouslyAllowBrowser) {
      throw new PartnerError(
        'PartnerClient with an API key runs on servers: in a browser, use `MerchantClient` with a merchant session ' +
          '(created on your server with `client.merchants.sessions.create`).',
      );
    }
    const baseURL = options.baseURL ?? readEnv('PARTNER_BASE_URL');
    if (!baseURL) {
      throw new PartnerError(
        'No base URL: pass `new PartnerClient({ baseURL })` or set the PARTNER_BASE_URL environment variable.',
      );
    }
    this.#options = { ...options };
    this.#apiKey = apiKey;
    this.baseURL = checkBaseURL(baseURL);
    this.maxRetries = checkCount('maxRetries', options.maxRetries ?? DEFAULT_MAX_RETRIES, 0);
    this.timeout = checkCount('timeout', options.timeout ?? DEFAULT_TIMEOUT_MS, 0);
    const transport = new Transport({
      apiKey,
      baseURL: this.baseURL,
      maxRetries: this.maxRetries,
      timeout: this.timeout,
      fetch: options.fetch,
      headers: { ...options.headers },
      sleep: options.sleep ?? defaultSleep,
      prefetchPages: options.prefetchPages ?? true,
    });
    this.merchants = new Merchants(transport);
    this.tags = new Tags(transport);
    this.events = new Events(transport);
    this.webhooks = new Webhooks(transport);
    this.stats = new Stats(transport);
    this.erasures = new Erasures(transport);
    this.testHelpers = new TestHelpers(transport);
    this.settings = new Settings(transport);
  }

  /** The API key in use (a getter, so that logging the client does not print it). */
  get apiKey(): string {
    return this.#apiKey;
  }

  /**
   * A copy of this client with some options changed; `headers` are merged (a `null` value removes
   * one), everything else replaces. The original client is unchanged.
   */
  withOptions(options: ClientOptions): PartnerClient {
    return new PartnerClient({
      ...this.#options,
      apiKey: this.apiKey,
      baseURL: this.baseURL,
      ...options,
      headers: { ...this.#options.headers, ...options.headers },
    });
  }
}
