import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { deleteEventBatch } from '../events/delete-events.js';
import { enqueueWebhookEvent } from '../webhooks/outbox.js';
import { ERASURE_COLUMNS, toErasure } from './erasure-view.js';

/** Events deleted per statement, each its own transaction: row locks of one visitor, held milliseconds. */
export const ERASURE_BATCH = 5_000;

/** An erasure claimed by one process; `lease` is the fencing token of the claim. */
export interface ErasureClaim {
  id: string;
  partnerId: string;
  merchantId: string | null;
  muid: string;
  lease: string;
}

/** Claims the oldest erasure not completed that nobody holds, created at least `graceMs` ago. It becomes `running`. */
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
 * Deletes at most `batch` of the visitor's events in the erasure's scope (one statement, one short transaction, by the
 * (merchant_id, muid) index) and adds them to `events_deleted`.
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
      , u as (
        update erasures set events_deleted = events_deleted + (select count(*) from d) where id = ${claim.id}::uuid
      )
      select count(*)::int as n from d`,
  );
  const [row] = rowsOf<{ n: number }>(result);
  return row?.n ?? 0;
}

/** The merchants an erasure covers: its merchant, or every merchant of its partner. */
export async function merchantsInScope(db: Database, claim: ErasureClaim): Promise<string[]> {
  if (claim.merchantId) return [claim.merchantId];
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`select id::text from merchants where partner_id = ${claim.partnerId}::uuid`),
  );
  return rows.map((row) => row.id);
}

/** The last step: the erasure is `completed` with `erasure.completed` in one transaction. */
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
