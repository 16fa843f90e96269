import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions, Transport } from '../core/request.js';

/** The `stats.spike` webhook's switch and threshold. */
export interface StatsSpikeSettings {
  enabled: boolean;
  /** A spike: an hour's visitors at least this many times the median of that hour in the four weeks before (default 3). */
  multiple: number;
}

/** The partner's own settings. */
export interface PartnerSettings {
  /**
   * Days its merchants' events are kept unless a merchant sets `retentionDays`; `null`: the server's
   * default (kept forever when the server sets none).
   */
  defaultRetentionDays: number | null;
  /** `stats.digest` webhooks: each merchant's week, Monday 06:00 in the merchant's `timezone`. */
  statsDigest: boolean;
  statsSpike: StatsSpikeSettings;
}

/** The settings to change: at least one. */
export interface SettingsUpdateParams {
  /** 1..3650 days, or `null` for the server's default. */
  defaultRetentionDays?: number | null;
  /** `stats.digest` webhooks on or off. */
  statsDigest?: boolean;
  /** `stats.spike` webhooks: the fields given change (`multiple` 1.5..100). */
  statsSpike?: Partial<StatsSpikeSettings>;
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
   * `PATCH /v1/partners/settings`: sets the given settings. A new retention default: merchants without
   * their own `retentionDays` follow it from their next retention pass, which starts at once. The
   * statistics' webhooks (`statsDigest`, `statsSpike`) take effect at the server's next look.
   */
  update(params: SettingsUpdateParams, options?: RequestOptions): APIPromise<PartnerSettings> {
    const body: Record<string, unknown> = {};
    if (params.defaultRetentionDays !== undefined) body.defaultRetentionDays = params.defaultRetentionDays;
    if (params.statsDigest !== undefined) body.statsDigest = params.statsDigest;
    if (params.statsSpike !== undefined) body.statsSpike = params.statsSpike;
    return this.#transport.patch('/v1/partners/settings', body, options);
  }
}
