import type { APIPromise } from '../core/api-promise.js';
import { type PagePromise, paginate } from '../core/pagination.js';
import type { RequestOptions, Transport } from '../core/request.js';
import { buildQuery } from '../internal/query.js';
import { Goals } from './goals.js';
import { MerchantSessions } from './merchant-sessions.js';
import type { TagSummary } from './tags.js';

/** A merchant as listed (spec 2.1). */
export interface Merchant {
  merchantId: string;
  name: string;
  /** `false` in test mode (reached with an `mp_test_` key). */
  livemode: boolean;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** Days its events are kept; `null`: the partner's `defaultRetentionDays`, then the server's default (else forever). */
  retentionDays: number | null;
  /** Its IANA time zone, canonical name (default `UTC`): the week of its `stats.digest` webhook. */
  timezone: string;
  /** The merchant's tags. */
  tags: TagSummary[];
}

export interface MerchantListParams {
  /** Page to start from (1-based, default 1). Iteration continues from it. */
  page?: number;
  /** Items per page, 1..100 (server default 10). */
  limit?: number;
}

export interface MerchantCreateParams {
  /** Non-empty merchant name. */
  name: string;
  /** IANA time zone (any case or alias; default `UTC`): its weekly digest goes out Monday 06:00 there. */
  timezone?: string;
}

export interface MerchantCreateResponse {
  merchantId: string;
}

/** The fields to change: at least one. */
export interface MerchantUpdateParams {
  /** The new name: trimmed, 1..255 characters. */
  name?: string;
  /** Days its events are kept, 1..3650; `null`: inherit the partner's default (`client.settings`). */
  retentionDays?: number | null;
  /** IANA time zone (any case or alias), stored under its canonical name. */
  timezone?: string;
}

/** `merchants.delete`: gone for every reader now; its data is purged in the background, then `merchant.deleted`. */
export interface MerchantDeleteResponse {
  merchantId: string;
  deleted: true;
  purge: 'pending';
}

const merchantPath = (merchantId: string) => `/v1/partners/merchant/${encodeURIComponent(merchantId)}`;

/** The server's default page size for merchants. */
const DEFAULT_LIMIT = 10;

/** `client.merchants`: `/v1/partners/merchant`. */
export class Merchants {
  readonly #transport: Transport;
  /** `/v1/partners/merchant/{merchantId}/sessions`: tokens a browser may hold for one merchant. */
  readonly sessions: MerchantSessions;
  /** `/v1/partners/merchant/{merchantId}/goals`: conversions the statistics count. */
  readonly goals: Goals;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
    this.sessions = new MerchantSessions(transport);
    this.goals = new Goals(transport);
  }

  /** `GET /v1/partners/merchant`: a page of the partner's merchants, iterable over all of them. */
  list(params: MerchantListParams = {}, options?: RequestOptions): PagePromise<Merchant> {
    const start = params.page ?? 1;
    return paginate<Merchant>(
      {
        itemsKey: 'merchants',
        limit: params.limit ?? DEFAULT_LIMIT,
        idOf: (merchant) => merchant.merchantId,
        prefetch: this.#transport.prefetchPages,
        fetch: (page, _cursor, hooks) =>
          this.#transport.getPage(
            '/v1/partners/merchant',
            buildQuery({ page: page === start ? params.page : page, limit: params.limit }),
            options,
            hooks,
          ),
      },
      start,
    );
  }

  /** `POST /v1/partners/merchant`: creates a merchant (201). */
  create(params: MerchantCreateParams, options?: RequestOptions): APIPromise<MerchantCreateResponse> {
    const body =
      params.timezone === undefined ? { name: params.name } : { name: params.name, timezone: params.timezone };
    return this.#transport.post('/v1/partners/merchant', body, options);
  }

  /** `GET /v1/partners/merchant/{merchantId}`: one merchant with its tags (404 once deleted). */
  retrieve(merchantId: string, options?: RequestOptions): APIPromise<Merchant> {
    return this.#transport.get(merchantPath(merchantId), new URLSearchParams(), options);
  }

  /** `PATCH /v1/partners/merchant/{merchantId}`: sets its name, retention period and/or zone; resolves with it. */
  update(merchantId: string, params: MerchantUpdateParams, options?: RequestOptions): APIPromise<Merchant> {
    const body = { name: params.name, retentionDays: params.retentionDays, timezone: params.timezone };
    return this.#transport.patch(merchantPath(merchantId), body, options);
  }

  /**
   * `DELETE /v1/partners/merchant/{merchantId}` (202): the merchant is 404 everywhere at once and its
   * tags stop collecting; its events and aggregates are purged in the background, then the
   * `merchant.deleted` webhook arrives.
   */
  delete(merchantId: string, options?: RequestOptions): APIPromise<MerchantDeleteResponse> {
    return this.#transport.delete<MerchantDeleteResponse>(merchantPath(merchantId), options);
  }
}
