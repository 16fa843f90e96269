import { PartnerError } from './errors.js';

/** What a partner's backend hands to the page: a session token and when it expires. */
export interface SessionGrant {
  /** `ms_...` from `client.merchants.sessions.create` on the partner's server. */
  token: string;
  /** ISO 8601 (as the API answers it), a Date, or epoch milliseconds. */
  expiresAt: string | Date | number;
}

/** Renew this long before expiry, at most (a quarter of a short session's lifetime otherwise). */
const RENEW_MARGIN_MS = 30_000;

function epochOf(value: string | Date | number): number {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : value.getTime();
  if (!Number.isFinite(ms)) throw new PartnerError(`\`expiresAt\` must be a date, got ${JSON.stringify(value)}.`);
  return ms;
}

/**
 * The session token a `MerchantClient` sends: the one it was given, renewed through the partner's
 * `refreshSession` callback before it expires and once after a 401. Concurrent calls share one
 * renewal.
 * @internal
 */
export class SessionAuth {
  #token: string | undefined;
  #renewAt = Number.POSITIVE_INFINITY;
  #renewing: Promise<string> | undefined;
  readonly #refresh: (() => Promise<SessionGrant>) | undefined;
  readonly #now: () => number;

  constructor(options: {
    sessionToken?: string | undefined;
    expiresAt?: string | Date | number | undefined;
    refreshSession?: (() => Promise<SessionGrant>) | undefined;
    now?: (() => number) | undefined;
  }) {
    this.#refresh = options.refreshSession;
    this.#now = options.now ?? (() => Date.now());
    if (!options.sessionToken && !options.refreshSession) {
      throw new PartnerError(
        'No session: pass `new MerchantClient({ sessionToken })` or a `refreshSession` callback that fetches one from your server.',
      );
    }
    if (options.sessionToken) this.#accept(options.sessionToken, options.expiresAt);
  }

  /** Whether a 401 can be answered by renewing the session. */
  get renewable(): boolean {
    return this.#refresh !== undefined;
  }

  /** The token to send now; renewed first when it is missing, near its expiry, or `stale` (after a 401). */
  async token(stale = false): Promise<string> {
    const due = this.#token === undefined || stale || this.#now() >= this.#renewAt;
    if (!due || !this.#refresh) {
      if (this.#token === undefined) throw new PartnerError('No session token.');
      return this.#token;
    }
    this.#renewing ??= this.#renew().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  async #renew(): Promise<string> {
    const refresh = this.#refresh as () => Promise<SessionGrant>;
    const grant = await refresh();
    if (!grant || typeof grant.token !== 'string' || grant.token === '') {
      throw new PartnerError('`refreshSession` must resolve with `{ token, expiresAt }`.');
    }
    this.#accept(grant.token, grant.expiresAt);
    return grant.token;
  }

  #accept(token: string, expiresAt: string | Date | number | undefined): void {
    this.#token = token;
    if (expiresAt === undefined) {
      this.#renewAt = Number.POSITIVE_INFINITY;
      return;
    }
    const end = epochOf(expiresAt);
    const now = this.#now();
    this.#renewAt = end - Math.min(RENEW_MARGIN_MS, Math.max(0, (end - now) / 4));
  }
}
