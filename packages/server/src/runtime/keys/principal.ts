/**
 * Who a partner request comes from, as authentication answers it (features/partners/authenticate.ts)
 * and the key cache holds it (key-cache.ts): types only, beside the cache, so that runtime/ never
 * imports features/.
 */
export interface AuthenticatedPartner {
  id: string;
  name: string;
  domain: string;
  recordName: string;
  /**
   * False for a partner's test-mode twin (an `mp_test_` key, or a session one created): every
   * object it reaches is test data (docs/decisions/test-mode.md).
   */
  livemode: boolean;
  /**
   * The key the request was authenticated with (absent for partners built in process): what an
   * event stream watches so that it ends when the key is revoked or expires (key-watch.ts).
   */
  key?: AuthenticatedKey;
  /**
   * Set when the request came with a merchant session token (`ms_...`): the partner is the
   * session's, `key` the key that created it, and the request may only do what the session allows.
   */
  session?: SessionPrincipal;
}

export interface AuthenticatedKey {
  id: string;
  /** Epoch ms; null when the key never expires. */
  expiresAt: number | null;
  /** The key cache's generation when the key was read: a change since then means "check again". */
  generation: number;
}

/**
 * The scope of a request authenticated with a merchant session token (`ms_...`) rather than an API
 * key: one merchant, read-only, for the procedures that opt in (`meta.sessionAccess`).
 */
export interface SessionPrincipal {
  id: string;
  merchantId: string;
  /** Exact origins whose pages get CORS headers for this token. */
  allowedOrigins: readonly string[];
  /** Epoch ms. */
  expiresAt: number;
}
