import { and, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { apiKeys } from '../../db/schema/index.js';
import { AppError } from '../../kernel/errors.js';
import { type ApiKeyCache, KEY_CACHE_TTL_MS } from './key-cache.js';
import type { AuthenticatedKey } from './principal.js';

/** The message of the final `UNAUTHORIZED` frame of a stream whose key ended. */
const KEY_ENDED_MESSAGE = 'The API key of this stream was revoked or expired';
/** setTimeout's largest delay; a later expiry is re-armed when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;
/** After a failed recheck (database away), the next try. */
const RETRY_MS = 1000;

interface Watcher {
  expiresAt: number | null;
  timer: NodeJS.Timeout | null;
  end: (error: AppError) => void;
}

/** Ends long-lived work when the API key it was opened with stops being valid, on every process. */
export class KeyWatch {
  private readonly byKey = new Map<string, Set<Watcher>>();
  private stopListening: (() => void) | null = null;
  private poll: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly db: Database,
    private readonly cache: ApiKeyCache,
  ) {}

  /** Calls `end` once when `key` is revoked, expires, or its partner is gone. */
  watch(key: AuthenticatedKey, end: (error: AppError) => void): () => void {
    const watcher: Watcher = { expiresAt: key.expiresAt, timer: null, end };
    let set = this.byKey.get(key.id);
    if (!set) {
      set = new Set();
      this.byKey.set(key.id, set);
    }
    set.add(watcher);
    this.arm(watcher);
    this.start();
    // A change between authentication and now would have been missed: check once more.
    if (this.cache.version !== key.generation) this.recheck();
    return () => this.forget(key.id, watcher);
  }

  private start(): void {
    if (!this.stopListening) this.stopListening = this.cache.onInvalidate(() => this.recheck());
    if (!this.poll) {
      this.poll = setInterval(() => this.recheck(), KEY_CACHE_TTL_MS);
      this.poll.unref();
    }
  }

  private forget(keyId: string, watcher: Watcher): void {
    if (watcher.timer) clearTimeout(watcher.timer);
    watcher.timer = null;
    const set = this.byKey.get(keyId);
    if (!set?.delete(watcher)) return;
    if (set.size === 0) this.byKey.delete(keyId);
    if (this.byKey.size === 0) {
      this.stopListening?.();
      this.stopListening = null;
      if (this.poll) clearInterval(this.poll);
      this.poll = null;
    }
  }

  private arm(watcher: Watcher): void {
    if (watcher.timer) clearTimeout(watcher.timer);
    watcher.timer = null;
    if (watcher.expiresAt === null) return;
    const delay = watcher.expiresAt - Date.now();
    if (delay <= 0) {
      this.endKeyOf(watcher);
      return;
    }
    watcher.timer = setTimeout(
      () => {
        watcher.timer = null;
        if (watcher.expiresAt !== null && watcher.expiresAt <= Date.now()) this.endKeyOf(watcher);
        else this.arm(watcher);
      },
      Math.min(delay, MAX_TIMER_MS),
    );
    watcher.timer.unref();
  }

  private endKeyOf(watcher: Watcher): void {
    for (const [keyId, set] of this.byKey) {
      if (set.has(watcher)) {
        this.forget(keyId, watcher);
        watcher.end(new AppError('UNAUTHORIZED', KEY_ENDED_MESSAGE));
        return;
      }
    }
  }

  /** Rechecks every watched key (coalesced: one query in flight, one more queued at most). */
  private recheck(): void {
    if (this.checking) {
      this.again = true;
      return;
    }
    if (this.byKey.size === 0) return;
    this.checking = this.check()
      .catch(() => {
        // The database did not answer: the streams keep going until a recheck can tell.
        const retry = setTimeout(() => this.recheck(), RETRY_MS);
        retry.unref();
      })
      .finally(() => {
        this.checking = null;
        if (this.again) {
          this.again = false;
          this.recheck();
        }
      });
  }

  private async check(): Promise<void> {
    const ids = [...this.byKey.keys()];
    const rows = await this.db
      .select({ id: apiKeys.id, expiresAt: apiKeys.expiresAt })
      .from(apiKeys)
      .where(
        and(
          inArray(apiKeys.id, ids),
          isNull(apiKeys.revokedAt),
          or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`)),
        ),
      );
    const usable = new Map(rows.map((row) => [row.id, row.expiresAt?.getTime() ?? null]));
    for (const id of ids) {
      const set = this.byKey.get(id);
      if (!set) continue;
      if (!usable.has(id)) {
        for (const watcher of [...set]) {
          this.forget(id, watcher);
          watcher.end(new AppError('UNAUTHORIZED', KEY_ENDED_MESSAGE));
        }
        continue;
      }
      const expiresAt = usable.get(id) ?? null;
      for (const watcher of set) {
        if (watcher.expiresAt !== expiresAt) {
          watcher.expiresAt = expiresAt;
          this.arm(watcher);
        }
      }
    }
  }
}
