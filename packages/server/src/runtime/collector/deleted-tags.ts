import type { DatabaseHandle } from '../../db/client.js';
import type { Logger } from '../../kernel/logger.js';

/** The channel migration 0021's trigger notifies with the id of every deleted tag, at commit. */
const DELETED_TAGS_CHANNEL = 'partner_tags_deleted';

/** Given the ids of deleted tags, or null: notifications may have been missed, forget every tag. */
export type TagsGoneListener = (tagIds: readonly string[] | null) => void;

/** Tells this process's tag caches that tags were deleted. */
export class DeletedTags {
  private readonly listeners = new Set<TagsGoneListener>();

  /** Calls `listener` on every deletion from now on; returns the unsubscribe function. */
  subscribe(listener: TagsGoneListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tags deleted (by this process, or notified). */
  gone(tagIds: readonly string[] | null): void {
    if (tagIds !== null && tagIds.length === 0) return;
    for (const listener of this.listeners) listener(tagIds);
  }
}

/** LISTENs on `partner_tags_deleted`; after every re-LISTEN the caches forget every tag. */
export async function watchDeletedTags(
  database: DatabaseHandle,
  deleted: DeletedTags,
  logger?: Logger,
): Promise<() => Promise<void>> {
  try {
    return await database.listen(
      DELETED_TAGS_CHANNEL,
      (payload) => deleted.gone(payload ? [payload] : null),
      () => deleted.gone(null),
    );
  } catch (error) {
    logger?.warn({ err: error }, 'deleted tags: LISTEN failed; tag caches expire on their TTL');
    return async () => {};
  }
}
