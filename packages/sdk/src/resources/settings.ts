import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';

/** The partner's own settings. */
export interface PartnerSettings {
  /**
   * Days its merchants' events are kept unless a merchant sets `retentionDays`; `null`: the server's
   * default (kept forever when the server sets none).
   */
  defaultRetentionDays: number | null;
}

export interface SettingsUpdateParams {
  /** 1..3650 days, or `null` for the server's default. */
  defaultRetentionDays: number | null;
}

/** `client.settings`: `/v1/partners/settings`. */
export class Settings {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `GET /v1/partners/settings`: the partner's settings. */
  retrieve(options?: RequestOptions): APIPromise<PartnerSettings> {
    return this.#transport.get('/v1/partners/settings', new URLSearchParams(), options);
  }

  /**
   * `PATCH /v1/partners/settings`: sets the default retention of the partner's merchants; those
   * without their own `retentionDays` follow it from their next retention pass, which starts at once.
   */
  update(params: SettingsUpdateParams, options?: RequestOptions): APIPromise<PartnerSettings> {
    return this.#transport.patch(
      '/v1/partners/settings',
      { defaultRetentionDays: params.defaultRetentionDays },
      options,
    );
  }
}
