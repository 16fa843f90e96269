import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { apiKeys } from '../../db/schema/index.js';

/** `last_used_at` is written at most once per minute per key and process. */
const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_TRACKED = 10_000;

/** Records that a key was used, off the request's path. */
export class KeyUsage {
  private readonly lastWritten = new Map<string, number>();

  touch(db: Database, keyId: string, now = Date.now()): void {
    const previous = this.lastWritten.get(keyId);
    if (previous !== undefined && now - previous < LAST_USED_RESOLUTION_MS) return;
    if (this.lastWritten.size >= MAX_TRACKED) this.lastWritten.clear();
    this.lastWritten.set(keyId, now);
    db.update(apiKeys)
      .set({ lastUsedAt: sql`now()` })
      .where(eq(apiKeys.id, keyId))
      .then(
        () => undefined,
        () => this.lastWritten.delete(keyId),
      );
  }
}
