import type { Tag, TagCheck } from '@partner/shared-schemas';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { type TagRow, tags } from '../../../db/schema/index.js';
import type { Env } from '../../../kernel/env.js';
import { enqueueWebhookEvent } from '../../webhooks/outbox.js';
import type { DnsCheck } from '../dns-check.js';
import { readTagWithPartner, toTagView } from '../tag-view.js';

/** A transaction of the app's database. */
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/** The tag webhooks (docs/decisions/tag-monitor.md). */
export type TagEventType = 'tag.verified' | 'tag.activated' | 'tag.disconnected' | 'tag.reconnected';

/** Writes one tag event in the caller's transaction (the webhook outbox), `data` the tag as GET returns it. */
type TagEventSink = (tx: Transaction, event: { partnerId: string; type: TagEventType; data: Tag }) => Promise<void>;

/** The monitor's schedule (env: TAG_RECHECK_SCHEDULE, TAG_RECHECK_WINDOW, TAG_HEALTH_INTERVAL). */
export interface CheckSchedule {
  /** Intervals between re-checks of an unverified tag (ms); the last repeats. */
  recheck: number[];
  /** How long after generate or a manual verify an unverified tag is re-checked (ms). */
  recheckWindowMs: number;
  /** Interval of health checks of verified tags (ms). */
  healthIntervalMs: number;
}

export interface TagStateConfig {
  tagTargetHost: string;
  schedule: CheckSchedule;
  emit: TagEventSink;
}

/** The tag checks' configuration from the environment. */
export function tagStateConfigFromEnv(env: Env): TagStateConfig {
  return {
    tagTargetHost: env.TAG_TARGET_HOST,
    schedule: {
      recheck: env.TAG_RECHECK_SCHEDULE,
      recheckWindowMs: env.TAG_RECHECK_WINDOW,
      healthIntervalMs: env.TAG_HEALTH_INTERVAL,
    },
    emit: async (tx, event) => {
      await enqueueWebhookEvent(tx, event);
    },
  };
}

/** The delay before re-check number `attempt` (0-based) of an unverified tag. */
export function recheckDelay(schedule: CheckSchedule, attempt: number): number {
  const list = schedule.recheck;
  return list[Math.min(attempt, list.length - 1)] ?? 60_000;
}

/** A resolver outage is retried after the first re-check interval (never later than the health interval). */
function outageRetryDelay(schedule: CheckSchedule): number {
  return Math.min(recheckDelay(schedule, 0), schedule.healthIntervalMs);
}

const at = (ms: number) => new Date(Date.now() + ms);

/** Where a check comes from: a partner's verify call, the background monitor holding a claim. */
export type CheckSource = { kind: 'verify' } | { kind: 'monitor'; lease: string } | { kind: 'trigger' };

/**
 * THE transition of a custom tag after a DNS check (verify and monitor alike), in one transaction
 * with the webhook messages it causes (transactional outbox):
 * - a good check connects and verifies the tag (`inactive` -> `waiting_for_events`; `tag.verified`
 *   the first time, `tag.reconnected` when a verified tag was disconnected) and schedules the next
 *   health check;
 * - a bad check by the monitor disconnects a verified, connected tag (`tag.disconnected`; status and
 *   isVerified unchanged) or moves an unverified tag along its re-check schedule; a bad verify call
 *   changes no flag (it restarts an unverified tag's re-check schedule);
 * - a resolver outage changes no state: the check is retried later.
 * Every check is recorded as `last_check`. A monitor result whose claim was overtaken (a verify ran
 * meanwhile) is dropped. Returns false when nothing was written.
 */
export async function applyCheck(
  db: Database,
  config: TagStateConfig,
  tagId: string,
  check: DnsCheck,
  source: CheckSource,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [tag] = await tx
      .select()
      .from(tags)
      .where(
        source.kind === 'monitor' ? and(eq(tags.id, tagId), eq(tags.checkLease, source.lease)) : eq(tags.id, tagId),
      )
      .for('update')
      .limit(1);
    if (tag?.domainType !== 'custom') return false;
    const { schedule } = config;
    const background = source.kind !== 'verify';
    const lastCheck: TagCheck = {
      checkedAt: check.checkedAt,
      ok: check.ok,
      ...(check.reason ? { reason: check.reason } : {}),
      found: check.found,
    };
    const update: Partial<typeof tags.$inferInsert> = { lastCheck, checkLease: null, checkLeaseUntil: null };
    const events: TagEventType[] = [];
    if (check.ok) {
      update.isConnected = true;
      update.isVerified = true;
      if (!tag.verifiedAt) update.verifiedAt = new Date();
      if (tag.status === 'inactive') update.status = 'waiting_for_events';
      update.nextCheckAt = at(schedule.healthIntervalMs);
      update.recheckAttempt = 0;
      update.recheckUntil = null;
      if (!tag.isVerified) events.push('tag.verified');
      else if (!tag.isConnected) events.push('tag.reconnected');
    } else if (check.reason === 'RESOLVER_UNAVAILABLE') {
      if (background) update.nextCheckAt = at(outageRetryDelay(schedule));
      else if (!tag.isVerified) Object.assign(update, restartedRechecks(schedule));
    } else if (tag.isVerified) {
      if (background) {
        update.nextCheckAt = at(schedule.healthIntervalMs);
        if (tag.isConnected) {
          update.isConnected = false;
          events.push('tag.disconnected');
        }
      }
    } else if (background) {
      const attempt = tag.recheckAttempt + 1;
      const next = at(recheckDelay(schedule, attempt));
      update.recheckAttempt = attempt;
      update.nextCheckAt = tag.recheckUntil && next > tag.recheckUntil ? null : next;
    } else {
      Object.assign(update, restartedRechecks(schedule));
    }
    await tx.update(tags).set(update).where(eq(tags.id, tag.id));
    if (events.length > 0) await emitTagEvents(tx, config, tag.id, events);
    return true;
  });
}

/** An unverified tag's re-check schedule from its start (after generate, or a manual verify). */
export function restartedRechecks(
  schedule: CheckSchedule,
): Pick<TagRow, 'recheckAttempt' | 'nextCheckAt' | 'recheckUntil'> {
  return { recheckAttempt: 0, nextCheckAt: at(recheckDelay(schedule, 0)), recheckUntil: at(schedule.recheckWindowMs) };
}

/** Reads the tag as GET returns it, inside `tx`, and writes one outbox message per event. */
export async function emitTagEvents(
  tx: Transaction,
  config: Pick<TagStateConfig, 'tagTargetHost' | 'emit'>,
  tagId: string,
  events: TagEventType[],
): Promise<void> {
  const row = await readTagWithPartner(tx, tagId);
  if (!row) return;
  const data = toTagView(row.tag, row.partner, config.tagTargetHost);
  for (const type of events) await config.emit(tx, { partnerId: row.partner.id, type, data });
}
