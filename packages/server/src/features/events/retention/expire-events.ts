import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { rowsOf } from '../../../db/read-rows.js';
import { deleteEventBatch } from '../delete-events.js';

/** Rows per statement, each its own transaction: row locks of one merchant, held milliseconds. */
export const RETENTION_BATCH = 5_000;

/** A merchant claimed for a retention pass. */
export interface RetentionClaim {
  merchantId: string;
  days: number;
  startedAt: string;
  cutoff: string;
  lease: string;
}

/** Events removed by one round: dated before the cutoff, or still dated ahead but received before it. */
export type RetentionCounts = Record<'events' | 'future_dated', number>;

const ISO = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * Claims the live merchant most overdue for a retention pass whose effective period is set. Due: never passed, passed
 * more than `everyMs` ago, or before its partner last changed the default.
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

/** One round of a pass, each statement bounded by `batch` and its own short transaction. */
export async function expireRound(
  db: Database,
  claim: RetentionClaim,
  batch = RETENTION_BATCH,
): Promise<{ counts: RetentionCounts; futureSeqs: number[] }> {
  const merchant = sql`merchant_id = ${claim.merchantId}::uuid`;
  const cutoff = sql`${claim.cutoff}::timestamptz`;
  const events = rowsOf(await deleteEventBatch(db, sql`${merchant} and event_time < ${cutoff}`, batch, sql`1`)).length;
  const future = rowsOf<{ seq: string }>(
    await deleteEventBatch(
      db,
      sql`${merchant} and event_time > ${claim.startedAt}::timestamptz and received_at < ${cutoff}`,
      batch,
      sql`e.seq`,
      sql`select seq::text from d`,
    ),
  );
  return { counts: { events, future_dated: future.length }, futureSeqs: future.map((row) => Number(row.seq)) };
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
