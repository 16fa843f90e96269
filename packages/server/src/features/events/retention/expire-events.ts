import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { rowsOf } from '../../../db/read-rows.js';
import { deleteEventBatch } from '../delete-events.js';

/** Rows per statement, each its own transaction: row locks of one merchant, held milliseconds. */
export const RETENTION_BATCH = 5_000;

/**
 * A merchant claimed for a retention pass. `startedAt` is the pass's "now" (milliseconds); events
 * with `event_time` before `cutoff` (= startedAt - days) go. `lease` is the claim's fencing token.
 */
export interface RetentionClaim {
  merchantId: string;
  days: number;
  startedAt: string;
  cutoff: string;
  lease: string;
}

/** Rows removed (events, stat_dimensions) or cleared (stat_buckets' visitor sketches) by one round. */
export type RetentionCounts = Record<'events' | 'future_dated' | 'stat_dimensions' | 'stat_buckets', number>;

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * Claims the live merchant most overdue for a retention pass whose effective period is set: its own
 * `retention_days`, else its partner's `default_retention_days`, else `serverDays`
 * (EVENT_RETENTION_DAYS); none: its events are kept and it is never claimed. Due: never passed,
 * passed more than `everyMs` ago, or before its partner last changed the default. The lease lets
 * one process work it at a time; a process that dies gives it up when the lease runs out.
 */
export async function claimRetention(
  db: Database,
  options: { leaseMs: number; everyMs: number; serverDays: number | undefined },
): Promise<RetentionClaim | undefined> {
  const period = sql`coalesce(m.retention_days, s.default_retention_days, ${options.serverDays ?? null}::int)`;
  const [row] = rowsOf<RetentionClaim>(
    await db.execute(sql`
      with due as (
        select m.id, ${period} as days from merchants m
        left join partner_settings s on s.partner_id = m.partner_id
        where m.deleted_at is null and ${period} is not null
          and (m.retention_claimed_until is null or m.retention_claimed_until < now())
          and (m.retention_checked_at is null
            or m.retention_checked_at < now() - make_interval(secs => ${options.everyMs / 1000})
            or m.retention_checked_at < s.retention_updated_at)
        order by m.retention_checked_at nulls first
        limit 1
        for update of m skip locked
      ), pass as (select date_trunc('milliseconds', now()) as started)
      update merchants m set retention_claimed_until = now() + make_interval(secs => ${options.leaseMs / 1000})
      from due, pass where m.id = due.id
      returning m.id::text as "merchantId", due.days,
        to_char(pass.started at time zone 'UTC', ${ISO}) as "startedAt",
        to_char((pass.started - make_interval(secs => due.days * 86400)) at time zone 'UTC', ${ISO}) as cutoff,
        m.retention_claimed_until::text as lease`),
  );
  return row;
}

/** At most `batch` rows of `table` matching `where`, deleted by their row ids in one statement. */
async function deleteBatch(db: Database, table: string, where: ReturnType<typeof sql>, batch: number) {
  const result = await db.execute(sql`
    delete from ${sql.identifier(table)}
    where ctid = any(array(select ctid from ${sql.identifier(table)} where ${where} limit ${batch}))
    returning 1`);
  return rowsOf(result).length;
}

/**
 * One round of a pass, each statement bounded by `batch` and its own short transaction (ingestion of
 * this merchant and others never waits on more than one): events older than the period by
 * `event_time` (the index `events_merchant_time_idx`); events still dated in the future that were
 * received before the cutoff (so a far-future `event_time` cannot keep one forever); once neither
 * fills a batch, what of the statistics may identify a visitor: `stat_dimensions` rows (paths,
 * referrers, utm values, each with a sketch) and the visitor sketches of `stat_buckets` (emptied;
 * the counts stay), for buckets of every level (15 minutes, hours, days, weeks) wholly
 * before the cutoff. `stat_revenue` and the counts are kept (docs/decisions/data-deletion.md, "Retention").
 *
 * `events` is partitioned by month of `event_time` (migration 0028): a month wholly before every
 * merchant's cutoff is dropped whole by jobs/event-partitions.ts; these batches remain for merchants
 * whose period is shorter than what the others keep (each event's id in `event_ids` goes with it).
 */
export async function expireRound(db: Database, claim: RetentionClaim, batch = RETENTION_BATCH) {
  const merchant = sql`merchant_id = ${claim.merchantId}::uuid`;
  const cutoff = sql`${claim.cutoff}::timestamptz`;
  const eventBatch = async (where: SQL) => rowsOf(await deleteEventBatch(db, where, batch, sql`1`)).length;
  const counts: RetentionCounts = {
    events: await eventBatch(sql`${merchant} and event_time < ${cutoff}`),
    future_dated: await eventBatch(
      sql`${merchant} and event_time > ${claim.startedAt}::timestamptz and received_at < ${cutoff}`,
    ),
    stat_dimensions: 0,
    stat_buckets: 0,
  };
  // The statistics once the events are done: their scans cost every round otherwise (measured: 115
  // ms a round at 10M events, half the round).
  if (counts.events === batch || counts.future_dated === batch) return counts;
  // Rows of every level (grain, in minutes) whose bucket ends by the cutoff.
  const before = sql`bucket <= ${claim.cutoff}::timestamptz - interval '15 minutes'
    and bucket + make_interval(mins => grain) <= ${claim.cutoff}::timestamptz`;
  counts.stat_dimensions = await deleteBatch(db, 'stat_dimensions', sql`${merchant} and ${before}`, batch);
  counts.stat_buckets = rowsOf(
    await db.execute(sql`
      update stat_buckets set visitors = ''::bytea, visitor_count = null
      where ctid = any(array(select ctid from stat_buckets
        where ${merchant} and ${before} and length(visitors) > 0 limit ${batch}))
      returning 1`),
  ).length;
  // Kept point counts there (migration 0035) would not be taken again: their rows changed.
  await db.execute(sql`delete from stat_point_visitors where ${merchant} and hi <= ${cutoff}`);
  return counts;
}

/** Gives the claim back unfinished: the next run (here or elsewhere) goes on with a fresh cutoff. */
export async function releaseRetention(db: Database, claim: RetentionClaim): Promise<void> {
  await db.execute(sql`
    update merchants set retention_claimed_until = null
    where id = ${claim.merchantId}::uuid and retention_claimed_until::text = ${claim.lease}`);
}

/** The pass is done: the merchant is next due `everyMs` after its start. False when the lease was lost. */
export async function finishRetention(db: Database, claim: RetentionClaim): Promise<boolean> {
  const rows = rowsOf(
    await db.execute(sql`
      update merchants set retention_claimed_until = null, retention_checked_at = ${claim.startedAt}::timestamptz
      where id = ${claim.merchantId}::uuid and retention_claimed_until::text = ${claim.lease}
      returning 1`),
  );
  return rows.length > 0;
}
