import type { Database, DatabaseHandle } from '../../db/client.js';
import {
  type AuthenticatedKey,
  type AuthenticatedPartner,
  authenticate,
} from '../../features/partners/authenticate.js';
import { DEFAULT_ROTATION_OVERLAP_MS, revokeApiKeys, rotateApiKey } from '../../features/partners/key-admin.js';
import type { AppError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import { ApiKeyCache, watchApiKeys } from './key-cache.js';
import { KeyWatch } from './key-watch.js';
import { KeyUsage } from './last-used.js';

/**
 * An app's API keys (`AppDeps.keys`): the verified-key cache, the `last_used_at` clock and the
 * watch that ends event streams whose key stops being valid. One per app, never shared through
 * module state: two apps on one database (tests, a CLI beside a server) each keep their own, and
 * learn of the other's changes through the `partner_api_keys` notification.
 */
export class ApiKeys {
  readonly cache = new ApiKeyCache();
  readonly usage = new KeyUsage();
  private readonly streams: KeyWatch;

  constructor(private readonly db: Database) {
    this.streams = new KeyWatch(db, this.cache);
  }

  /**
   * The partner that owns the bearer token (401 otherwise; features/partners/authenticate.ts).
   * `beforeLookup` runs before a token not in the cache is read from the database (and may refuse it).
   */
  authenticate(
    header: string | string[] | undefined,
    beforeLookup?: (hash: string) => Promise<void>,
  ): Promise<AuthenticatedPartner> {
    return authenticate(this.db, this, header, beforeLookup);
  }

  /** Calls `end` once when `key` stops being valid; returns the function that stops watching. */
  watch(key: AuthenticatedKey, end: (error: AppError) => void): () => void {
    return this.streams.watch(key, end);
  }

  /** Issues a new key (features/partners/key-admin.ts); this app forgets its cached keys at once. */
  async rotate(partnerId: string, overlapMs = DEFAULT_ROTATION_OVERLAP_MS) {
    const rotated = await rotateApiKey(this.db, partnerId, overlapMs);
    this.cache.invalidate();
    return rotated;
  }

  /** Revokes every usable key of the partner; this app forgets its cached keys at once. */
  async revoke(partnerId: string): Promise<number> {
    const revoked = await revokeApiKeys(this.db, partnerId);
    this.cache.invalidate();
    return revoked;
  }

  /** LISTENs for key and partner changes (the cache is on while it runs); returns the stop function. */
  listen(database: DatabaseHandle, logger?: Logger): Promise<() => Promise<void>> {
    return watchApiKeys(database, this.cache, logger);
  }
}
