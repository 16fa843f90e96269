import type { Database, DatabaseHandle } from '../../db/client.js';
import type { AppError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import { ApiKeyCache, watchApiKeys } from './key-cache.js';
import { KeyWatch } from './key-watch.js';
import { KeyUsage } from './last-used.js';
import type { AuthenticatedKey } from './principal.js';

/**
 * An app's API keys: the verified-key cache. One per app, never shared through module state: two apps on one database
 * each keep their own, and learn of the other's changes through the `partner_api_keys` notification.
 */
export class ApiKeys {
  readonly cache = new ApiKeyCache();
  readonly usage = new KeyUsage();
  private readonly streams: KeyWatch;

  constructor(db: Database) {
    this.streams = new KeyWatch(db, this.cache);
  }

  /** Calls `end` once when `key` stops being valid; returns the function that stops watching. */
  watch(key: AuthenticatedKey, end: (error: AppError) => void): () => void {
    return this.streams.watch(key, end);
  }

  /** LISTENs for key and partner changes (the cache is on while it runs); returns the stop function. */
  listen(database: DatabaseHandle, logger?: Logger): Promise<() => Promise<void>> {
    return watchApiKeys(database, this.cache, logger);
  }
}
