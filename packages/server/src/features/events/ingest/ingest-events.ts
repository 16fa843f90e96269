import { randomUUID } from 'node:crypto';
import {
  type CollectResponse,
  deepTextProblem,
  type EventConsent,
  INSTANT_RANGE_MESSAGE,
  isCanonicalInstant,
  readIsoInstant,
} from '@partner/shared-schemas';
import { AppError, toAppError } from '../../../kernel/errors.js';
import type { Metrics } from '../../../kernel/metrics.js';
import type { EventLog } from '../../../runtime/event-log.js';
import type { EventInsertRow, EventQueue } from '../../../runtime/event-queue.js';
import type { TagLiveness } from '../../tags/lifecycle/tag-liveness.js';
import { describeVisitor, type RequestVisitor, type Way } from './visitor-client.js';

export interface IncomingEvent {
  id?: string | undefined;
  event_name: string;
  event_time?: string | undefined;
  muid?: string | undefined;
  data?: unknown;
}

export interface IngestDeps {
  eventQueue: EventQueue;
  tagLiveness: TagLiveness;
  /** Counts accepted and rejected events (metrics.ts); optional for callers outside the app. */
  metrics?: Pick<Metrics, 'ingest'> | undefined;
  /** Set in log mode (EVENT_LOG_URL): events are published to the log instead of written here. */
  eventLog?: EventLog | undefined;
  /** The tag's volume quotas (runtime/rate-limits.ts); absent: none (callers outside the app). */
  limits?: TagQuotas | undefined;
  /** Where events refused as bots are counted; absent (no statistics here): not counted. */
  stats?: { countBots(merchantId: string, dates: readonly number[]): void } | undefined;
}

/** Charges a live tag's events and stored bytes; throws 429 RATE_LIMITED when over a quota. */
interface TagQuotas {
  chargeTag(tagKey: string, events: number, bytes: number): Promise<void>;
}

/**
 * The one ingestion path (`POST /v1/collect` and the collector's `POST /e`). A database that is down or silent answers
 * 503 SERVICE_UNAVAILABLE with Retry-After, never 500: a retried batch is safe.
 */
export interface IngestDefaults {
  muid?: string;
  /** The muid is the visitor's cookie (or the cookieless hash): it wins over a `muid` in the body. */
  muidWins?: boolean;
  /** The consent state the events were collected under (the collector's); absent: `not_required`. */
  consent?: EventConsent;
  /** The request's visitor and way in. */
  visitor?: { request: RequestVisitor; way: Way };
}

export async function ingestEvents(
  deps: IngestDeps,
  input: { tagId: string; events: IncomingEvent[] },
  defaults: IngestDefaults = {},
): Promise<CollectResponse> {
  try {
    const answer = await ingest(deps, input, defaults);
    deps.metrics?.ingest.events.inc({ outcome: 'accepted' }, input.events.length);
    return answer;
  } catch (error) {
    deps.metrics?.ingest.events.inc({ outcome: 'rejected' }, input.events.length);
    throw toAppError(error, { retrySafe: true });
  }
}

async function ingest(
  deps: IngestDeps,
  input: { tagId: string; events: IncomingEvent[] },
  defaults: IngestDefaults,
): Promise<CollectResponse> {
  // In log mode a tag known live is served while the database does not answer (202 needs no database).
  const tag = await deps.tagLiveness.liveTag(input.tagId, { knownWhenUnreachable: deps.eventLog !== undefined });
  // PostgreSQL text cannot hold U+0000: refuse it here (400) rather than fail a shared write.
  const { events } = input;
  for (let index = 0; index < events.length; index++) {
    const field = nulField(events[index] as IncomingEvent);
    if (field) {
      throw new AppError('VALIDATION_ERROR', `Invalid request: events.${index}.${field}: must not contain U+0000`);
    }
  }
  const client = defaults.visitor ? describeVisitor(defaults.visitor.request, defaults.visitor.way) : undefined;
  const now = new Date().toISOString();
  if (client === 'bot') {
    const at = Date.parse(now);
    deps.stats?.countBots(
      tag.merchantId,
      events.map((event) => (event.event_time ? Date.parse(event.event_time) : at)),
    );
    return { accepted: events.length };
  }
  const consent = defaults.consent && defaults.consent !== 'not_required' ? defaults.consent : undefined;
  const wonMuid = defaults.muidWins ? defaults.muid : undefined;
  // Every row one literal of one shape (a spread of optional keys gave each row a shape of its own).
  const rows: EventInsertRow[] = new Array(events.length);
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as IncomingEvent;
    const rawData = JSON.stringify(event.data ?? {});
    // The schemas refuse a U+0000 in data; for a caller that skipped them, the escape in the JSON is the cheap sign,
    // the walk the proof.
    if (rawData.includes('\\u0000') && deepTextProblem(event.data) === 'nul') {
      throw new AppError('VALIDATION_ERROR', `Invalid request: events.${index}.data: must not contain U+0000`);
    }
    rows[index] = {
      merchantId: tag.merchantId,
      tagId: tag.id,
      id: event.id ?? randomUUID(),
      muid: wonMuid ?? event.muid ?? defaults.muid ?? randomUUID(),
      eventName: event.event_name,
      eventTime: event.event_time ? eventTime(event.event_time, index) : now,
      rawData,
      consent,
      client,
    };
  }
  if (deps.limits) {
    // What the batch stores: each event's data JSON and name (ids and muid are short and bounded).
    let bytes = 0;
    for (const row of rows) bytes += Buffer.byteLength(row.rawData) + row.eventName.length;
    await deps.limits.chargeTag(tag.id, rows.length, bytes);
  }
  if (deps.eventLog) await deps.eventLog.publish(tag.merchantId, rows);
  else await deps.eventQueue.enqueue(rows);
  return { accepted: input.events.length };
}

/** The first of an event's id, name and muid holding U+0000, if any. */
function nulField(event: IncomingEvent): 'id' | 'event_name' | 'muid' | undefined {
  if (event.id?.includes('\u0000')) return 'id';
  if (event.event_name.includes('\u0000')) return 'event_name';
  if (event.muid?.includes('\u0000')) return 'muid';
  return undefined;
}

/** The stored form of a sent `event_time`. */
function eventTime(value: string, index: number): string {
  if (isCanonicalInstant(value)) return value; // what toISOString would write
  const instant = readIsoInstant(value);
  if (instant instanceof Date) return instant.toISOString();
  const problem = instant === 'range' ? INSTANT_RANGE_MESSAGE : 'must be an ISO 8601 date or date-time';
  throw new AppError('VALIDATION_ERROR', `Invalid request: events.${index}.event_time: ${problem}`);
}
