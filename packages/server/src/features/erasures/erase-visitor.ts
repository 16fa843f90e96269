import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { deleteEventBatch } from '../events/delete-events.js';
import { foldAllPendingStats } from '../stats/fold.js';
import { recountBuckets } from '../stats/recount.js';
import { enqueueWebhookEvent } from '../webhooks/outbox.js';
import { ERASURE_COLUMNS, toErasure } from './erasure-view.js';

/** Events deleted per statement, each its own transaction: row locks of one visitor, held milliseconds. */
export const ERASURE_BATCH = 5_000;
/** Buckets of one merchant recounted per transaction. */
const RECOUNT_BUCKETS = 24;

/** An erasure claimed by one process; `lease` is the fencing token of the claim. */
export interface ErasureClaim {
  id: string;
  partnerId: string;
  merchantId: string | null;
  muid: string;
  lease: string;
}

/**
 * Claims the oldest erasure not completed that nobody holds, created at least `graceMs` ago (an
 * event stored by a statement that began before the erasure, and so did not see its suppression,
 * has committed by then). It becomes `running`.
 */
export async function claimErasure(
  db: Database,
  options: { leaseMs: number; graceMs: number },
): Promise<ErasureClaim | undefined> {
  const [row] = rowsOf<ErasureClaim>(
    await db.execute(sql`
      update erasures set status = 'running', claimed_until = now() + make_interval(secs => ${options.leaseMs / 1000})
      where id = (
        select id from erasures
        where status <> 'completed'
          and created_at <= now() - make_interval(secs => ${options.graceMs / 1000})
          and (claimed_until is null or claimed_until < now())
        order by created_at
        limit 1
        for update skip locked
      )
      returning id::text as id, partner_id::text as "partnerId", merchant_id::text as "merchantId", muid,
        claimed_until::text as lease`),
  );
  return row;
}

/** Gives the claim back unfinished (the next run, here or elsewhere, goes on from what is left). */
export async function releaseErasure(db: Database, claim: ErasureClaim): Promise<void> {
  await db.execute(sql`
    update erasures set claimed_until = null where id = ${claim.id}::uuid and claimed_until::text = ${claim.lease}`);
}

/**
 * Deletes at most `batch` of the visitor's events (and their ids) in the erasure's scope (one statement, one short
 * transaction, by the (merchant_id, muid) index), records the 15-minute buckets they were in for the
 * recount, and adds them to `events_deleted`. The delete trigger keeps `event_day_counts` exact.
 * Returns how many it deleted (0: none left).
 */
export async function eraseRound(db: Database, claim: ErasureClaim, batch = ERASURE_BATCH): Promise<number> {
  const scope = claim.merchantId
    ? sql`merchant_id = ${claim.merchantId}::uuid`
    : sql`merchant_id in (select id from merchants where partner_id = ${claim.partnerId}::uuid)`;
  const result = await deleteEventBatch(
    db,
    sql`${scope} and muid = ${claim.muid}`,
    batch,
    sql`e.merchant_id, e.event_time`,
    sql`
      , b as (
        insert into erasure_buckets (erasure_id, merchant_id, bucket)
        select distinct ${claim.id}::uuid, merchant_id, date_bin('15 minutes', event_time, timestamptz '1970-01-01 00:00:00+00')
        from d
        on conflict do nothing
      ), u as (
        update erasures set events_deleted = events_deleted + (select count(*) from d) where id = ${claim.id}::uuid
      )
      select count(*)::int as n from d`,
  );
  const [row] = rowsOf<{ n: number }>(result);
  return row?.n ?? 0;
}

/**
 * Recounts up to RECOUNT_BUCKETS buckets of one merchant the erased events were in (features/stats/
 * recount.ts), then forgets them. Folds what is pending first, the first time (`fold`), so the
 * recount leaves out as few pending events as it can: only an improvement, so a fold that fails
 * (any merchant's row it cannot read) never holds up the erasure; what stays pending is left out of
 * the recount and folded later. Returns the buckets recounted (0: none left).
 */
export async function recountRound(db: Database, claim: ErasureClaim, fold: boolean): Promise<number> {
  if (fold) await foldAllPendingStats(db).catch(() => {});
  const rows = rowsOf<{ merchantId: string; bucket: string }>(
    await db.execute(sql`
      select merchant_id::text as "merchantId",
        to_char(bucket at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as bucket
      from erasure_buckets
      where erasure_id = ${claim.id}::uuid
        and merchant_id = (select merchant_id from erasure_buckets where erasure_id = ${claim.id}::uuid limit 1)
      order by bucket
      limit ${RECOUNT_BUCKETS}`),
  );
  const [first] = rows;
  if (!first) return 0;
  const buckets = rows.map((row) => row.bucket);
  await recountBuckets(db, first.merchantId, buckets);
  await db.execute(sql`
    delete from erasure_buckets
    where erasure_id = ${claim.id}::uuid and merchant_id = ${first.merchantId}::uuid
      and bucket in (select value::timestamptz from json_array_elements_text(${JSON.stringify(buckets)}::json))`);
  return rows.length;
}

/**
 * The last step: the erasure is `completed` with `erasure.completed` (the erasure as GET shows it)
 * in one transaction, only while the claim is still this one's. Without `suppress` the visitor's
 * suppression ends `holdMs` later (in log mode the event log's age limit: a message sent before the
 * erasure may be drained until then). Returns false when the lease was lost.
 */
export async function finishErasure(db: Database, claim: ErasureClaim, holdMs: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = rowsOf(
      await tx.execute(sql`
        update erasures set status = 'completed', completed_at = now(), claimed_until = null,
          suppressed_until = case when suppress then null else now() + make_interval(secs => ${holdMs / 1000}) end
        where id = ${claim.id}::uuid and claimed_until::text = ${claim.lease}
        returning ${ERASURE_COLUMNS}`),
    );
    if (!row) return false;
    const erasure = toErasure(row);
    await enqueueWebhookEvent(tx, { partnerId: claim.partnerId, type: 'erasure.completed', data: { ...erasure } });
    return true;
  });
}
