import { randomUUID } from 'node:crypto';
import { type CollectResponse, parseIsoInstant } from '@partner/shared-schemas';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { events, type TagRow, tags } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';

export interface IncomingEvent {
  id?: string | undefined;
  event_name: string;
  event_time?: string | undefined;
  muid?: string | undefined;
  data?: unknown;
}

/** A tag takes events once it is live: preverified at once, custom after a successful verification. */
export function isLive(tag: Pick<TagRow, 'status'>): boolean {
  return tag.status === 'active' || tag.status === 'waiting_for_events';
}

/**
 * The one ingestion path. Events are keyed by (merchant, id): a retried batch stores nothing
 * twice. The first stored event moves a `waiting_for_events` tag to `active`.
 */
export async function ingestEvents(
  db: Database,
  input: { tagId: string; events: IncomingEvent[] },
): Promise<CollectResponse> {
  const [tag] = await db.select().from(tags).where(eq(tags.id, input.tagId)).limit(1);
  if (!tag) throw new AppError('TAG_NOT_FOUND', `No tag ${input.tagId}`);
  if (!isLive(tag)) {
    throw new AppError(
      'TAG_NOT_LIVE',
      `Tag ${tag.id} is not live yet: a custom-domain tag takes events after a successful DNS verification`,
    );
  }
  const now = new Date();
  const rows = input.events.map((event) => ({
    merchantId: tag.merchantId,
    tagId: tag.id,
    id: event.id ?? randomUUID(),
    muid: event.muid ?? randomUUID(),
    eventName: event.event_name,
    eventTime: (event.event_time ? parseIsoInstant(event.event_time) : null) ?? now,
    rawData: JSON.stringify(event.data ?? {}),
  }));
  const inserted = await db.insert(events).values(rows).onConflictDoNothing().returning({ id: events.id });
  if (inserted.length > 0) {
    await db
      .update(tags)
      .set({
        status: 'active',
        firstEventAt: sql`coalesce(${tags.firstEventAt}, now())`,
        lastEventAt: sql`now()`,
      })
      .where(eq(tags.id, tag.id));
  }
  return { accepted: input.events.length };
}
