import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';

export interface MerchantSessionCreateParams {
  merchantId: string;
  /**
   * The exact origins of the pages that will use the token (`https://host[:port]`, no path; `http`
   * only for localhost and 127.0.0.1). Only they get CORS headers.
   */
  allowedOrigins: readonly string[];
  /** Seconds the token lives: 1..3600 (server default 900). */
  lifetimeSeconds?: number;
}

/** A merchant session: hand `token` and `expiresAt` to the browser (`MerchantClient`). */
export interface MerchantSession {
  /** `ms_...`, shown only here. */
  token: string;
  merchantId: string;
  /** The origins as the server normalised them (lower-cased host, default port dropped). */
  allowedOrigins: string[];
  /** ISO 8601, UTC. */
  expiresAt: string;
}

/** `client.merchants.sessions`: short-lived tokens a browser may hold for one merchant. */
export class MerchantSessions {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * `POST /v1/partners/merchant/{merchantId}/sessions` (201): a token that reads this merchant's
   * statistics and tag status from `allowedOrigins` until it expires or your API key is revoked.
   * Call it on your server; never send your API key to a browser.
   */
  create(params: MerchantSessionCreateParams, options?: RequestOptions): APIPromise<MerchantSession> {
    return this.#transport.post(
      `/v1/partners/merchant/${encodeURIComponent(params.merchantId)}/sessions`,
      {
        allowedOrigins: params.allowedOrigins,
        ...(params.lifetimeSeconds === undefined ? {} : { lifetimeSeconds: params.lifetimeSeconds }),
      },
      options,
    );
  }
}
