import type { RequestOptions, Transport } from '../core/request.js';

/** Tag status (spec section 3). */
export type TagStatus = 'active' | 'inactive' | 'waiting_for_events';

/** A tag as listed inside a merchant (spec 2.2). */
export interface TagSummary {
  /** Domain where the tag is installed. */
  hostname: string;
  tagId: string;
  status: TagStatus;
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

export interface TagGenerateParams {
  merchantId: string;
  /** Root domain without protocol or `www.`, e.g. `shop-example.com`. */
  domain: string;
}

export interface TagGenerateResponse {
  tagId: string;
  record: DnsRecord;
  /** `active` on a preverified domain, `inactive` on a custom domain until verified. */
  status: TagStatus;
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

/** `client.tags`: `/v1/partners/tag/*`. */
export class Tags {
  readonly #transport: Transport;

  /** @internal */
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `POST /v1/partners/tag/generate`: creates (or returns the existing) tag for a merchant domain. */
  generate(params: TagGenerateParams, options?: RequestOptions): Promise<TagGenerateResponse> {
    return this.#transport.post(
      '/v1/partners/tag/generate',
      { merchantId: params.merchantId, domain: params.domain },
      options,
    );
  }

  /** `GET /v1/partners/tag/{tagId}/snippet`: the HTML snippet, collector host and script URL of a tag. */
  snippet(tagId: string, options?: RequestOptions): Promise<TagSnippet> {
    return this.#transport.get(`/v1/partners/tag/${encodeURIComponent(tagId)}/snippet`, new URLSearchParams(), options);
  }

  /** `POST /v1/partners/tag/verify`: checks the DNS record of a custom-domain tag. */
  verify(params: TagVerifyParams, options?: RequestOptions): Promise<TagVerifyResponse> {
    return this.#transport.post(
      '/v1/partners/tag/verify',
      { tagId: params.tagId, subdomain: params.subdomain },
      options,
    );
  }
}
