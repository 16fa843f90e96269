import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { apiKeys } from '../../db/schema/index.js';

/** `last_used_at` is written at most once per minute per key and process. */
export const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_TRACKED = 10_000;

const lastWritten = new Map<string, number>();

/**
 * Records that a key was used, off the request's path: the update is fired and never awaited, at
 * most once a minute per key, and a failure (database down, process closing) is ignored.
 */
export function touchApiKey(db: Database, keyId: string, now = Date.now()): void {
  const previous = lastWritten.get(keyId);
  if (previous !== undefined && now - previous < LAST_USED_RESOLUTION_MS) return;
  if (lastWritten.size >= MAX_TRACKED) lastWritten.clear();
  lastWritten.set(keyId, now);
  db.update(apiKeys)
    .set({ lastUsedAt: sql`now()` })
    .where(eq(apiKeys.id, keyId))
    .then(
      () => undefined,
      () => lastWritten.delete(keyId),
    );
}
