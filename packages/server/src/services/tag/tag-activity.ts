import { inArray, sql } from 'drizzle-orm';
import { TtlCache } from '../../cache/ttl-cache.js';
import type { Database } from '../../db/client.js';
import { tags } from '../../db/schema/index.js';

/** How long `last_event_at` may lag: a tag row is written at most once per this window per process. */
export const LAST_EVENT_RESOLUTION_MS = 5_000;

/**
 * THE tag lifecycle step of ingestion, called by both ingestion paths once events are committed
 * (the group-commit queue, and the log writers): a tag that stored an event becomes `active`
 * (from `waiting_for_events`), keeps its `first_event_at` and moves `last_event_at`.
 */
export async function recordTagEvents(db: Database, tagIds: readonly string[]): Promise<void> {
  if (tagIds.length === 0) return;
  await db
    .update(tags)
    .set({
      status: sql`case when ${tags.status} = 'waiting_for_events' then 'active'::tag_status else ${tags.status} end`,
      firstEventAt: sql`coalesce(${tags.firstEventAt}, now())`,
      lastEventAt: sql`now()`,
    })
    .where(inArray(tags.id, [...tagIds].sort()));
}

/**
 * `recordTagEvents` at most once per LAST_EVENT_RESOLUTION_MS per tag and process: a hot tag's
 * row is not written on every batch.
 */
export class TagActivity {
  private readonly touched = new TtlCache<string, true>(100_000);

  constructor(private readonly db: Database) {}

  /** Records the tags that stored events; returns the ids it wrote (the others were recent). */
  async record(tagIds: readonly string[]): Promise<string[]> {
    const due = tagIds.filter((id) => this.touched.get(id) === undefined);
    if (due.length === 0) return due;
    await recordTagEvents(this.db, due);
    for (const id of due) this.touched.set(id, true, LAST_EVENT_RESOLUTION_MS);
    return due;
  }
}
