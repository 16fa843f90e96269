import { randomUUID } from 'node:crypto';
import { type CollectResponse, parseIsoInstant } from '@partner/shared-schemas';
import { eq } from 'drizzle-orm';
import { TtlCache } from '../../cache/ttl-cache.js';
import type { Database } from '../../db/client.js';
import { type TagRow, tags } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';
import type { EventLog } from './event-log.js';
import { type EventQueue, isConnectionError, LIVE_TAG_TTL_MS, type LiveTag } from './event-queue.js';
import type { EventInsertRow } from './store-events.js';

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

export interface IngestDeps {
  db: Database;
  eventQueue: EventQueue;
  /** Set in log mode (EVENT_LOG_URL): events are published to the log instead of written here. */
  eventLog?: EventLog | undefined;
}

/**
 * Live tags this process has seen, kept past the cache's TTL: in log mode, a live tag is served
 * from here while the database does not answer (the collector needs no database to say 202).
 */
const knownLive = new TtlCache<string, LiveTag>(200_000);
const KNOWN_LIVE_TTL_MS = 24 * 3600 * 1000;

/** The tag by id when it is live; cached briefly (only live tags: a verify takes effect at once). */
async function liveTag(deps: IngestDeps, tagId: string): Promise<LiveTag> {
  const cached = deps.eventQueue.liveTags.get(tagId);
  if (cached) return cached;
  let tag: LiveTag | undefined;
  try {
    [tag] = await deps.db
      .select({ id: tags.id, merchantId: tags.merchantId, status: tags.status })
      .from(tags)
      .where(eq(tags.id, tagId))
      .limit(1);
  } catch (error) {
    const known = deps.eventLog && isConnectionError(error) ? knownLive.get(tagId) : undefined;
    if (known) return known;
    throw error;
  }
  if (!tag) throw new AppError('TAG_NOT_FOUND', `No tag ${tagId}`);
  if (!isLive(tag)) {
    throw new AppError(
      'TAG_NOT_LIVE',
      `Tag ${tag.id} is not live yet: a custom-domain tag takes events after a successful DNS verification`,
    );
  }
  deps.eventQueue.liveTags.set(tagId, tag, LIVE_TAG_TTL_MS);
  knownLive.set(tagId, tag, KNOWN_LIVE_TTL_MS);
  return tag;
}

/**
 * The one ingestion path (`POST /v1/collect` and the collector's `POST /e`). Events are keyed by
 * (merchant, id), ids fixed here: a retried batch stores nothing twice. Direct mode: they are
 * written by the bounded group-commit queue, and this resolves once they are stored (503 when the
 * queue is full). Log mode: they are published to the durable log, and this resolves once the log
 * acknowledged them (503 when it does not answer in time or is full); writers store them. The
 * first stored event moves a `waiting_for_events` tag to `active` (see `EventQueue`).
 * `defaults.muid` is the visitor id for events that carry none (the collector's cookie).
 */
export async function ingestEvents(
  deps: IngestDeps,
  input: { tagId: string; events: IncomingEvent[] },
  defaults: { muid?: string } = {},
): Promise<CollectResponse> {
  const tag = await liveTag(deps, input.tagId);
  // PostgreSQL text cannot hold U+0000: refuse it here (400) rather than fail a shared write.
  input.events.forEach((event, index) => {
    for (const field of ['id', 'event_name', 'muid'] as const) {
      if (event[field]?.includes('\u0000')) {
        throw new AppError('VALIDATION_ERROR', `Invalid request: events.${index}.${field}: must not contain U+0000`);
      }
    }
  });
  const now = new Date().toISOString();
  const rows: EventInsertRow[] = input.events.map((event) => ({
    merchantId: tag.merchantId,
    tagId: tag.id,
    id: event.id ?? randomUUID(),
    muid: event.muid ?? defaults.muid ?? randomUUID(),
    eventName: event.event_name,
    eventTime: (event.event_time ? parseIsoInstant(event.event_time)?.toISOString() : undefined) ?? now,
    rawData: JSON.stringify(event.data ?? {}),
  }));
  if (deps.eventLog) await deps.eventLog.publish(tag.merchantId, rows);
  else await deps.eventQueue.enqueue(rows);
  return { accepted: input.events.length };
}
