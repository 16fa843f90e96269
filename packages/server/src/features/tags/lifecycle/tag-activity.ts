import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { rowsOf } from '../../../db/read-rows.js';
import { TtlCache } from '../../../kernel/ttl-cache.js';
import { emitTagEvents, type TagStateConfig } from './tag-state.js';

/** How long `last_event_at` may lag: a tag row is written at most once per this window per process. */
const LAST_EVENT_RESOLUTION_MS = 5_000;

/** Where `tag.activated` goes: the webhook outbox, with the tag rendered as GET returns it. */
export type TagEventOutbox = Pick<TagStateConfig, 'tagTargetHost' | 'emit'>;

/** THE tag lifecycle step of ingestion, called by both ingestion paths once events are committed. */
export async function recordTagEvents(db: Database, tagIds: readonly string[], outbox: TagEventOutbox): Promise<void> {
  if (tagIds.length === 0) return;
  const ids = sql.join(
    [...tagIds].sort().map((id) => sql`${id}::uuid`),
    sql`, `,
  );
  await db.transaction(async (tx) => {
    const result = await tx.execute(sql`
      with old as (
        select id, first_event_at is null as first from tags where id in (${ids}) order by id for update
      ), changed as (
        update tags t set
          status = case when t.status = 'waiting_for_events' then 'active'::tag_status else t.status end,
          first_event_at = coalesce(t.first_event_at, now()),
          last_event_at = now()
        from old where t.id = old.id
        returning t.id, old.first
      )
      select id::text as id from changed where first`);
    for (const { id } of rowsOf<{ id: string }>(result)) await emitTagEvents(tx, outbox, id, ['tag.activated']);
  });
}

/** `recordTagEvents` at most once per LAST_EVENT_RESOLUTION_MS per tag and process. */
export class TagActivity {
  private readonly touched = new TtlCache<string, true>(100_000);

  constructor(
    private readonly db: Database,
    private readonly outbox: TagEventOutbox,
  ) {}

  /** Records the tags that stored events; returns the ids it wrote (the others were recent). */
  async record(tagIds: readonly string[]): Promise<string[]> {
    const due = tagIds.filter((id) => this.touched.get(id) === undefined);
    if (due.length === 0) return due;
    await recordTagEvents(this.db, due, this.outbox);
    for (const id of due) this.touched.set(id, true, LAST_EVENT_RESOLUTION_MS);
    return due;
  }
}
