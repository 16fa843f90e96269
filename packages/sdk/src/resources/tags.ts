import type { APIPromise } from '../core/api-promise.js';
import type { InternalServerError, UnprocessableEntityError } from '../core/errors.js';
import type { RequestOptions, Transport } from '../core/request.js';
import type { DnsCheckReason, DnsRecordSeen } from './dns-check.js';

/** Tag status (spec section 3). */
export type TagStatus = 'active' | 'inactive' | 'waiting_for_events';

/** A tag as listed inside a merchant (spec 2.2). */
export interface TagSummary {
  /** Domain where the tag is installed. */
  hostname: string;
  tagId: string;
  status: TagStatus;
  /** `false` in test mode (reached with an `mp_test_` key). */
  livemode: boolean;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** Set by a successful DNS verification. */
  isConnected: boolean;
  /** Set by a successful DNS verification. */
  isVerified: boolean;
}

/** The CNAME record the domain owner publishes: `<name>.<domain>` must point at `value` (spec 2.3). */
export interface DnsRecord {
  type: 'CNAME';
  /** Record label relative to the domain: `edge-` and six random characters, e.g. `edge-k3j9x2`. */
  name: string;
  /** Target host of the CNAME. */
  value: string;
  /** Time to live in seconds (300), never negative. */
  ttl: number;
}

/**
 * What the tag asks before it names a visitor: `none` (the muid cookie at once), `opt-in` (no cookie
 * and no visitor id before `ptag('consent', 'granted')`), `opt-out` (collects until
 * `ptag('consent', 'denied')`, which stops collection and clears the cookie).
 */
export type TagConsentMode = 'none' | 'opt-in' | 'opt-out';

/** A tag's consent settings. */
export interface TagConsentSettings {
  consentMode: TagConsentMode;
  /** In `opt-in` and `opt-out`: Global Privacy Control counts as denied (default true). */
  respectGpc: boolean;
  /**
   * Events without consent are still collected, with no cookie: the visitor is a daily-rotating
   * hash (default: true for `opt-in`, false otherwise; with `none`, every event).
   */
  cookieless: boolean;
}

export interface TagGenerateParams extends Partial<TagConsentSettings> {
  merchantId: string;
  /** Root domain without protocol or `www.`, e.g. `shop-example.com`. */
  domain: string;
}

/** `tags.update`: the consent settings to change (at least one; the others stay). */
export type TagUpdateParams = Partial<TagConsentSettings>;

export interface TagGenerateResponse extends TagConsentSettings {
  tagId: string;
  /** The tag's domain: with "Existing tag retrieved", the existing tag's, which can differ from the one sent. */
  domain: string;
  record: DnsRecord;
  /** `active` on a preverified domain, `inactive` on a custom domain until verified. */
  status: TagStatus;
  /** `false` in test mode (reached with an `mp_test_` key), as on the tag itself. */
  livemode: boolean;
  message: 'New tag created successfully' | 'Existing tag retrieved';
}

export interface TagVerifyParams {
  tagId: string;
  /** Host name (any depth) whose CNAME is checked, e.g. `mtag.shop-example.com`. */
  subdomain: string;
}

export interface TagVerifyResponse {
  verified: boolean;
}

/** How to install a tag (`GET /v1/partners/tag/{tagId}/snippet`). */
export interface TagSnippet {
  tagId: string;
  /** The tag's collector host (its CNAME): the script and its events are served from it first-party. */
  collectorHost: string;
  /** The tag script, served by the collector host. */
  scriptUrl: string;
  /** The script element to paste into the `<head>` of every page of the merchant's site. */
  html: string;
}

/** The last DNS check of a tag (a verify call or the background monitor). */
export interface TagCheck {
  /** ISO 8601, UTC. */
  checkedAt: string;
  ok: boolean;
  reason?: DnsCheckReason | undefined;
  found: DnsRecordSeen[];
}

/** `tags.delete`: the tag is gone (its events stay with the merchant). */
export interface TagDeleteResponse {
  tagId: string;
  deleted: true;
}

/** One tag in full (`client.tags.retrieve`), also the `data` of the `tag.*` webhooks. */
export interface Tag extends TagConsentSettings {
  tagId: string;
  merchantId: string;
  /** `false` in test mode (reached with an `mp_test_` key). */
  livemode: boolean;
  /** The collector host (the CNAME name) the tag script and its events use. */
  hostname: string;
  /** The domain the tag was generated for. */
  domain: string;
  domainType: 'preverified' | 'custom';
  status: TagStatus;
  /** The CNAME was right at the last check. */
  isConnected: boolean;
  /** Domain ownership was proven once (never reset). */
  isVerified: boolean;
  record: DnsRecord;
  createdAt: string;
  verifiedAt: string | null;
  firstEventAt: string | null;
  lastEventAt: string | null;
  /** The last DNS check; null before any. */
  lastCheck: TagCheck | null;
  /** When the monitor checks next; null when none is scheduled. */
  nextCheckAt: string | null;
}

/** `client.tags`: `/v1/partners/tag/*`. */
export class Tags {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `POST /v1/partners/tag/generate`: creates (or returns the existing) tag for a merchant domain. */
  generate(params: TagGenerateParams, options?: RequestOptions): APIPromise<TagGenerateResponse> {
    return this.#transport.post(
      '/v1/partners/tag/generate',
      {
        merchantId: params.merchantId,
        domain: params.domain,
        consentMode: params.consentMode,
        respectGpc: params.respectGpc,
        cookieless: params.cookieless,
      },
      options,
    );
  }

  /**
   * `PATCH /v1/partners/tag/{tagId}`: sets the consent settings given (the others stay) and returns
   * the tag. The collector applies them to the next batch.
   */
  update(tagId: string, params: TagUpdateParams, options?: RequestOptions): APIPromise<Tag> {
    return this.#transport.patch(
      `/v1/partners/tag/${encodeURIComponent(tagId)}`,
      { consentMode: params.consentMode, respectGpc: params.respectGpc, cookieless: params.cookieless },
      options,
    );
  }

  /** `GET /v1/partners/tag/{tagId}/snippet`: the HTML snippet, collector host and script URL of a tag. */
  snippet(tagId: string, options?: RequestOptions): APIPromise<TagSnippet> {
    return this.#transport.get(`/v1/partners/tag/${encodeURIComponent(tagId)}/snippet`, new URLSearchParams(), options);
  }

  /** `GET /v1/partners/tag/{tagId}`: one tag in full, with the monitor's last and next DNS check. */
  retrieve(tagId: string, options?: RequestOptions): APIPromise<Tag> {
    return this.#transport.get(`/v1/partners/tag/${encodeURIComponent(tagId)}`, new URLSearchParams(), options);
  }

  /**
   * `DELETE /v1/partners/tag/{tagId}`: its collector host stops serving at once, the monitor stops,
   * and the merchant may generate a tag again (for a new domain). Sends `tag.deleted`.
   */
  delete(tagId: string, options?: RequestOptions): APIPromise<TagDeleteResponse> {
    return this.#transport.delete<TagDeleteResponse>(`/v1/partners/tag/${encodeURIComponent(tagId)}`, options);
  }

  /**
   * `POST /v1/partners/tag/verify`: checks the DNS record of a custom-domain tag. A failure throws
   * {@link UnprocessableEntityError} (or {@link InternalServerError} 503 when DNS did not answer)
   * whose `details` say why: `{ reason, expected, found, checkedAt }`.
   */
  verify(params: TagVerifyParams, options?: RequestOptions): APIPromise<TagVerifyResponse> {
    return this.#transport.post(
      '/v1/partners/tag/verify',
      { tagId: params.tagId, subdomain: params.subdomain },
      options,
    );
  }
}
