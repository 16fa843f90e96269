/** Who a partner request comes from. Types only, beside the key cache, so that runtime/ never imports features/. */
export interface AuthenticatedPartner {
  id: string;
  name: string;
  domain: string;
  recordName: string;
  /** False for a partner's test-mode twin: every object it reaches is test data. */
  livemode: boolean;
  /** The key the request was authenticated with (absent for partners built in process). */
  key?: AuthenticatedKey;
  /** Set when the request came with a merchant session token. */
  session?: SessionPrincipal;
}

export interface AuthenticatedKey {
  id: string;
  /** Epoch ms; null when the key never expires. */
  expiresAt: number | null;
  /** The key cache's generation when the key was read: a change since then means "check again". */
  generation: number;
}

/** The scope of a request authenticated with a merchant session token rather than an API key. */
export interface SessionPrincipal {
  id: string;
  merchantId: string;
  /** Exact origins whose pages get CORS headers for this token. */
  allowedOrigins: readonly string[];
  /** Epoch ms. */
  expiresAt: number;
}
