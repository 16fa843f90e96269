import type { DatabaseHandle } from '../../db/client.js';
import type { Logger } from '../../kernel/logger.js';
import type { SessionPrincipal } from './principal.js';

/** The channel migration 0005's triggers notify on when a key or a partner changes. */
const API_KEYS_CHANNEL = 'partner_api_keys';
/** How long a verified key is trusted without asking the database again. */
export const KEY_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

export interface CachedKey {
  keyId: string;
  keyHash: string;
  /** Epoch ms; null when the key never expires. */
  expiresAt: number | null;
  partner: { id: string; name: string; domain: string; recordName: string; livemode: boolean };
  /** A merchant session's entry (keyed by the token's hash; `keyId` is the key that created it). */
  session?: SessionPrincipal;
}

/**
 * Verified API keys by hash, one per app (`AppDeps.keys`). A lookup that started before an invalidation never writes
 * its answer.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { key: CachedKey; storedAt: number }>();
  private generation = 0;
  private readonly listeners = new Set<() => void>();
  /** LISTENs feeding this cache its invalidations (0 or 1 per app). */
  private watchers = 0;

  /** Whether answers are cached at all (only while listening). */
  get enabled(): boolean {
    return this.watchers > 0;
  }

  get(hash: string, now = Date.now()): CachedKey | undefined {
    if (this.watchers === 0) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (now - entry.storedAt >= KEY_CACHE_TTL_MS || (entry.key.expiresAt !== null && entry.key.expiresAt <= now)) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  /** A token to hand back to `set`: the answer is dropped if the cache was invalidated meanwhile. */
  begin(): number {
    return this.generation;
  }

  set(token: number, key: CachedKey, now = Date.now()): void {
    if (this.watchers === 0 || token !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key.keyHash, { key, storedAt: now });
  }

  /** The current generation: it moves on every invalidation (a key or partner changed somewhere). */
  get version(): number {
    return this.generation;
  }

  /** Calls `listener` on every invalidation: open event streams recheck their keys. */
  onInvalidate(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets every key (any key or partner changed). */
  invalidate(): void {
    this.generation += 1;
    this.entries.clear();
    for (const listener of [...this.listeners]) listener();
  }

  /** @internal Counts a listener in (on) or out; the cache is emptied either way. */
  watch(delta: 1 | -1): void {
    this.invalidate();
    this.watchers = Math.max(0, this.watchers + delta);
  }
}

/** LISTENs for key and partner changes and turns the database's key cache on. */
export async function watchApiKeys(
  database: DatabaseHandle,
  cache: ApiKeyCache,
  logger?: Logger,
): Promise<() => Promise<void>> {
  try {
    const unlisten = await database.listen(
      API_KEYS_CHANNEL,
      () => cache.invalidate(),
      // Also called after a reconnect: notifications sent while disconnected are lost, so forget all.
      () => cache.invalidate(),
    );
    cache.watch(1);
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      cache.watch(-1);
      await unlisten();
    };
  } catch (error) {
    logger?.warn({ err: error }, 'API-key cache disabled: LISTEN failed');
    return async () => {};
  }
}
