import type { APIPromise } from '../core/api-promise.js';
import { PartnerError } from '../core/errors.js';
import { type PagePromise, paginate } from '../core/pagination.js';
import type { RequestOptions, Transport } from '../core/request.js';
import { buildQuery } from '../internal/query.js';
import type { Erasure } from './erasures.js';
import type { StatsBreakdown, StatsSummary } from './stats.js';
import type { Tag } from './tags.js';

/** Event types a webhook endpoint can receive: the keys of {@link WebhookEventDataMap}. */
export type WebhookEventType = keyof WebhookEventDataMap;

/** A webhook endpoint as listed (never with its secret). */
export interface WebhookEndpoint {
  webhookId: string;
  url: string;
  /** Event types it receives; `null`: every type. */
  events: WebhookEventType[] | null;
  description: string | null;
  /** `false` in test mode (reached with an `mp_test_` key). */
  livemode: boolean;
  /** ISO 8601, UTC. */
  createdAt: string;
}

export interface WebhookCreateParams {
  /** An `https` URL on a public address. */
  url: string;
  /** Event types to receive (default: every type, including ones added later). */
  events?: WebhookEventType[];
  description?: string;
}

export interface WebhookCreateResponse extends WebhookEndpoint {
  /**
   * The signing secret (`whsec_...`): shown only here; keep it to verify deliveries with `unwrap`.
   * `null` only when the answer is a replay of an `Idempotency-Key` request (`secretOmitted`), e.g.
   * a retry after the first response was lost: secrets are never stored for replays. Call
   * `rotateSecret` to get a new one.
   */
  secret: string | null;
  /** `true` when `secret` was left out because this answer is an idempotent replay. */
  secretOmitted: boolean;
}

export interface WebhookListParams {
  /** Page to start from (1-based, default 1). Iteration continues from it. */
  page?: number;
  /** Items per page, 1..100 (server default 10). */
  limit?: number;
}

export interface WebhookRotateSecretResponse {
  /**
   * The new secret. The old one keeps signing alongside it until `previousSecretExpiresAt`. `null`
   * only in an idempotent replay (`secretOmitted`): rotate again to get a secret you hold.
   */
  secret: string | null;
  /** `true` when `secret` was left out because this answer is an idempotent replay. */
  secretOmitted: boolean;
  previousSecretExpiresAt: string;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/**
 * Why an attempt failed, as a class (the server keeps the detail in its logs): `http_status`: an
 * answer outside 2xx (see `lastStatusCode`); `timeout`; `dns`: the name did not resolve;
 * `blocked_address`: the URL or its address is not public (never called); `connection_refused`;
 * `connection_reset`; `tls`: handshake or certificate; `network`: any other connection failure;
 * `endpoint_deleted`.
 */
export type WebhookDeliveryError =
  | 'http_status'
  | 'timeout'
  | 'dns'
  | 'blocked_address'
  | 'connection_refused'
  | 'connection_reset'
  | 'tls'
  | 'network'
  | 'endpoint_deleted';

/** One message to one endpoint, with its delivery state. */
export interface WebhookDelivery {
  deliveryId: string;
  /** The `webhook-id` header: the same on every attempt. */
  messageId: string;
  eventType: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  /** Why the last attempt failed; `null` before one and after a success. */
  lastError: WebhookDeliveryError | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

export interface WebhookDeliveryListParams extends WebhookListParams {}

/**
 * The `data` of every `tag.*` event: the tag exactly as `GET /v1/partners/tag/{tagId}` returns it
 * after the change (`client.tags.retrieve`), i.e. {@link Tag}.
 */
export type WebhookTag = Tag;

/** The `data` of `merchant.deleted`, sent once a deleted merchant's data is purged. */
export interface WebhookMerchantDeleted {
  merchantId: string;
  /** When DELETE was answered: the merchant was gone for every reader from then (ISO 8601, UTC). */
  deletedAt: string;
  /** When the purge of its events, aggregates and webhooks finished (ISO 8601, UTC). */
  purgedAt: string;
}

/** The `data` of `erasure.completed`: the erasure as `client.erasures.retrieve` returns it, completed. */
export type WebhookErasureCompleted = Erasure;

/** A breakdown of a digest's week and of the week before, each as `client.stats.breakdown` answers it. */
export interface WebhookStatsWeekBreakdowns {
  current: StatsBreakdown;
  previous: StatsBreakdown;
}

/** The `data` of `stats.digest`: a merchant's week (Monday to Sunday in its zone), each part as the stats API answers it. */
export interface WebhookStatsDigest {
  merchantId: string;
  /** The merchant's IANA zone: the week's days are its. */
  timezone: string;
  week: { startDate: string; endDate: string };
  /** `client.stats.summary` of the week with `compare: 'previous'`: totals, goals and the week before. */
  summary: StatsSummary;
  /** Top 10 pages (breakdown by `path`). */
  topPages: WebhookStatsWeekBreakdowns;
  /** Top 10 channels (breakdown by `channel`). */
  channels: WebhookStatsWeekBreakdowns;
}

/** The `data` of `stats.spike`: an hour's visitors against the same hour of the four weeks before. */
export interface WebhookStatsSpike {
  merchantId: string;
  timezone: string;
  /** The clock hour counted (ISO 8601, UTC; `end` exclusive). */
  hour: { start: string; end: string };
  visitors: number;
  /** The median of `previousWeeks` (the mean of the middle two). */
  median: number;
  /** Visitors of the same hour 1, 2, 3 and 4 weeks before. */
  previousWeeks: number[];
  /** The partner's `statsSpike.multiple` when it was sent. */
  multiple: number;
}

/**
 * Each webhook event type and the type of its `data`. Adding an event to the API is one line here;
 * {@link WebhookEventType} and {@link WebhookEvent} follow.
 */
export interface WebhookEventDataMap {
  'tag.verified': WebhookTag;
  'tag.activated': WebhookTag;
  'tag.disconnected': WebhookTag;
  'tag.reconnected': WebhookTag;
  'tag.deleted': WebhookTag;
  'merchant.deleted': WebhookMerchantDeleted;
  'erasure.completed': WebhookErasureCompleted;
  'stats.digest': WebhookStatsDigest;
  'stats.spike': WebhookStatsSpike;
  'webhook.test': { webhookId: string; message: string };
}

/** What every webhook body carries besides `data` (a field every event gains is one line here). */
interface WebhookEnvelope<T extends WebhookEventType> {
  type: T;
  /** When the event happened (ISO 8601, UTC). */
  timestamp: string;
  /** `false` for an event of test mode (an endpoint made with an `mp_test_` key). */
  livemode: boolean;
  data: WebhookEventDataMap[T];
}

/** Every webhook body: a union discriminated on `type`, so `switch (event.type)` narrows `data`. */
export type WebhookEvent = { [T in WebhookEventType]: WebhookEnvelope<T> }[WebhookEventType];

/** The event of one `type`: `WebhookEventOf<'tag.verified'>['data']` is a {@link Tag}. */
export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;

/** `unwrap` could not verify a webhook: missing headers, stale timestamp, or no valid signature. */
export class WebhookVerificationError extends PartnerError {
  override name = 'WebhookVerificationError';
}

/** Headers as a `Headers` object, a plain record (node:http's `req.headers`) or a `Map`-like getter. */
export type WebhookHeaders =
  | Headers
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null | undefined };

/** Signatures older or newer than this (seconds) are refused: a captured request cannot be replayed later. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export interface UnwrapOptions {
  /** Override the clock (ms since the epoch), for tests. */
  now?: number;
  /** Tolerance in seconds (default 300). */
  toleranceSeconds?: number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null | undefined }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}

function base64ToBytes(value: string): Uint8Array<ArrayBuffer> {
  const binary = atob(value);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Compares two strings in time that depends only on their lengths. */
function timingSafeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const encoder = new TextEncoder();

/** Web Crypto's CryptoKey, named without the DOM lib. */
type HmacKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

/** The HMAC key of a `whsec_...` secret; anything else (not a string, empty, not base64) is a verification error. */
async function importSecret(secret: unknown): Promise<HmacKey> {
  if (typeof secret !== 'string') throw new WebhookVerificationError('The webhook secret must be a string.');
  const raw = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = base64ToBytes(raw);
  } catch {
    throw new WebhookVerificationError('The webhook secret is not a valid `whsec_...` secret.');
  }
  // Web Crypto refuses an empty HMAC key with a DataError: say what is wrong instead.
  if (keyBytes.length === 0)
    throw new WebhookVerificationError('The webhook secret is not a valid `whsec_...` secret.');
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new WebhookVerificationError('Web Crypto (crypto.subtle) is not available in this runtime.');
  return subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

async function sign(key: HmacKey, content: string): Promise<string> {
  const subtle = globalThis.crypto.subtle;
  return bytesToBase64(new Uint8Array(await subtle.sign('HMAC', key, encoder.encode(content))));
}

/**
 * Verifies a Standard Webhooks request and returns its typed event: `webhook-signature` must hold
 * a `v1,` HMAC-SHA256 of `id.timestamp.body` made with `secret` (one of several is enough: during a
 * secret rotation two are sent), and `webhook-timestamp` must be within 5 minutes of now. Web
 * Crypto only (Node 20+, browsers, edge runtimes); signatures compared in constant time. Pass the
 * raw body exactly as received (parsing and re-serialising JSON breaks the signature).
 */
export async function unwrapWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: UnwrapOptions = {},
): Promise<WebhookEvent> {
  try {
    return await verify(rawBody, headers, secret, options);
  } catch (error) {
    // Every bad input (secret, headers, body of the wrong type or shape) is a verification error,
    // so a receiver needs one catch to answer 400.
    if (error instanceof WebhookVerificationError) throw error;
    throw new WebhookVerificationError('The webhook could not be verified (malformed input).', { cause: error });
  }
}

async function verify(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: UnwrapOptions,
): Promise<WebhookEvent> {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new WebhookVerificationError('The webhook body must be the raw body, a string or bytes.');
  }
  if (headers === null || typeof headers !== 'object') {
    throw new WebhookVerificationError('The webhook headers must be an object.');
  }
  const key = await importSecret(secret);
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  }
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  }
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds)) {
    throw new WebhookVerificationError('Invalid webhook-timestamp header.');
  }
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (seconds < now - tolerance) throw new WebhookVerificationError('Webhook timestamp too old.');
  if (seconds > now + tolerance) throw new WebhookVerificationError('Webhook timestamp too new.');

  const expected = await sign(key, `${id}.${timestamp}.${body}`);
  let valid = false;
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',', 2);
    // Check every entry (no early exit): the time taken does not tell which one matched.
    if (version === 'v1' && signature !== undefined && timingSafeEqual(signature, expected)) valid = true;
  }
  if (!valid) throw new WebhookVerificationError('No matching webhook signature found.');
  try {
    return JSON.parse(body) as WebhookEvent;
  } catch (error) {
    throw new WebhookVerificationError('The webhook body is not JSON.', { cause: error });
  }
}

/** The server's default page size for webhooks and deliveries. */
const DEFAULT_LIMIT = 10;

const endpointPath = (webhookId: string) => `/v1/partners/webhooks/${encodeURIComponent(webhookId)}`;

/** `client.webhooks.deliveries`: `/v1/partners/webhooks/{webhookId}/deliveries`. */
export class WebhookDeliveries {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `GET /v1/partners/webhooks/{webhookId}/deliveries`: the endpoint's deliveries, newest first, iterable. */
  list(
    webhookId: string,
    params: WebhookDeliveryListParams = {},
    options?: RequestOptions,
  ): PagePromise<WebhookDelivery> {
    const start = params.page ?? 1;
    return paginate<WebhookDelivery>(
      {
        itemsKey: 'deliveries',
        limit: params.limit ?? DEFAULT_LIMIT,
        idOf: (delivery) => delivery.deliveryId,
        prefetch: this.#transport.prefetchPages,
        fetch: (page, _cursor, hooks) =>
          this.#transport.getPage(
            `${endpointPath(webhookId)}/deliveries`,
            buildQuery({ page: page === start ? params.page : page, limit: params.limit }),
            options,
            hooks,
          ),
      },
      start,
    );
  }

  /** `POST /v1/partners/webhooks/{webhookId}/deliveries/{deliveryId}/retry`: sends it again soon (202). */
  retry(webhookId: string, deliveryId: string, options?: RequestOptions): APIPromise<WebhookDelivery> {
    return this.#transport.post(
      `${endpointPath(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/retry`,
      undefined,
      options,
    );
  }
}

/** `client.webhooks`: `/v1/partners/webhooks`. */
export class Webhooks {
  readonly #transport: Transport;
  /** The delivery log of an endpoint, and manual retries. */
  readonly deliveries: WebhookDeliveries;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
    this.deliveries = new WebhookDeliveries(transport);
  }

  /** `POST /v1/partners/webhooks`: registers an endpoint (201); the answer holds its secret. */
  create(params: WebhookCreateParams, options?: RequestOptions): APIPromise<WebhookCreateResponse> {
    return this.#transport.post(
      '/v1/partners/webhooks',
      { url: params.url, events: params.events, description: params.description },
      options,
    );
  }

  /** `GET /v1/partners/webhooks`: a page of the partner's endpoints, iterable over all of them. */
  list(params: WebhookListParams = {}, options?: RequestOptions): PagePromise<WebhookEndpoint> {
    const start = params.page ?? 1;
    return paginate<WebhookEndpoint>(
      {
        itemsKey: 'webhooks',
        limit: params.limit ?? DEFAULT_LIMIT,
        idOf: (endpoint) => endpoint.webhookId,
        prefetch: this.#transport.prefetchPages,
        fetch: (page, _cursor, hooks) =>
          this.#transport.getPage(
            '/v1/partners/webhooks',
            buildQuery({ page: page === start ? params.page : page, limit: params.limit }),
            options,
            hooks,
          ),
      },
      start,
    );
  }

  /** `DELETE /v1/partners/webhooks/{webhookId}` (204): nothing more is sent to it. */
  delete(webhookId: string, options?: RequestOptions): APIPromise<void> {
    return this.#transport.delete(endpointPath(webhookId), options)._thenUnwrap(() => undefined);
  }

  /** `POST /v1/partners/webhooks/{webhookId}/rotate-secret`: a new secret; the old one signs too for 24 h. */
  rotateSecret(webhookId: string, options?: RequestOptions): APIPromise<WebhookRotateSecretResponse> {
    // No body: the operation has none (a body there is undocumented).
    return this.#transport.post(`${endpointPath(webhookId)}/rotate-secret`, undefined, options);
  }

  /** `POST /v1/partners/webhooks/{webhookId}/test`: queues a `webhook.test` event (202) and answers its delivery. */
  test(webhookId: string, options?: RequestOptions): APIPromise<WebhookDelivery> {
    return this.#transport.post(`${endpointPath(webhookId)}/test`, undefined, options);
  }

  /**
   * Verifies a webhook request with the endpoint's secret and returns the typed event; throws a
   * {@link WebhookVerificationError} otherwise. See {@link unwrapWebhook}.
   */
  unwrap(
    rawBody: string | Uint8Array,
    headers: WebhookHeaders,
    secret: string,
    options?: UnwrapOptions,
  ): Promise<WebhookEvent> {
    return unwrapWebhook(rawBody, headers, secret, options);
  }
}
