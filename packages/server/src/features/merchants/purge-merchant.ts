import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { deleteEventBatch } from '../events/delete-events.js';
import { enqueueWebhookEvent } from '../webhooks/outbox.js';

/** Rows deleted per statement, each its own transaction: row locks of one merchant, held milliseconds. */
export const PURGE_BATCH = 5_000;

/** A deleted merchant claimed for purging; `lease` is the fencing token of the claim. */
export interface PurgeClaim {
  merchantId: string;
  partnerId: string;
  deletedAt: string;
  lease: string;
}

/** Every table with a `merchant_id` column holds rows of one merchant. */
async function merchantTables(db: Database): Promise<string[]> {
  const rows = rowsOf<{ table_name: string }>(
    await db.execute(sql`
      select c.table_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and c.column_name = 'merchant_id' and t.table_type = 'BASE TABLE'
        -- A partition (of events, migration 0028) is purged through its partitioned table.
        and not exists (select 1 from pg_class k where k.oid = to_regclass(quote_ident(c.table_name)) and k.relispartition)
        -- The statistics' outbox drains by itself: the purge of the statistics waits for it (features/stats/store.ts).
        and c.table_name <> 'stats_outbox'
      order by c.table_name <> 'events', c.table_name`),
  );
  return rows.map((row) => row.table_name);
}

/** The tables per database handle (read once: a migration adding one comes with a restart). */
const tablesOf = new WeakMap<Database, Promise<string[]>>();

/** Rows deleted by one round, by table. */
export type PurgeCounts = Record<string, number>;

/** Claims the oldest deleted merchant whose purge nobody holds, deleted at least `graceMs` ago. */
export async function claimDeletedMerchant(
  db: Database,
  options: { leaseMs: number; graceMs: number },
): Promise<PurgeClaim | undefined> {
  const [row] = rowsOf<PurgeClaim>(
    await db.execute(sql`
      update merchants set purge_claimed_until = now() + make_interval(secs => ${options.leaseMs / 1000})
      where id = (
        select id from merchants
        where deleted_at is not null
          and deleted_at <= now() - make_interval(secs => ${options.graceMs / 1000})
          and (purge_claimed_until is null or purge_claimed_until < now())
        order by deleted_at
        limit 1
        for update skip locked
      )
      returning id::text as "merchantId", partner_id::text as "partnerId",
        to_char(deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "deletedAt",
        purge_claimed_until::text as lease`),
  );
  return row;
}

/** Gives the claim back unfinished (the next pass, here or elsewhere, goes on from what is left). */
export async function releasePurge(db: Database, claim: PurgeClaim): Promise<void> {
  await db.execute(sql`
    update merchants set purge_claimed_until = null
    where id = ${claim.merchantId}::uuid and purge_claimed_until::text = ${claim.lease}`);
}

/** One batch of at most `batch` rows of `table` belonging to the merchant, deleted by their row ids. */
async function deleteBatch(db: Database, table: string, where: ReturnType<typeof sql>, batch: number) {
  const result = await db.execute(sql`
    delete from ${sql.identifier(table)}
    where ctid = any(array(select ctid from ${sql.identifier(table)} where ${where} limit ${batch}))
    returning 1`);
  return rowsOf(result).length;
}

/** One round of the purge: at most `batch` rows from each table that still holds the merchant's rows. */
export async function purgeRound(db: Database, claim: PurgeClaim, batch = PURGE_BATCH): Promise<PurgeCounts> {
  const merchant = sql`merchant_id = ${claim.merchantId}::uuid`;
  const counts: PurgeCounts = {};
  let tables = tablesOf.get(db);
  if (!tables) {
    tables = merchantTables(db);
    tablesOf.set(db, tables);
    tables.catch(() => tablesOf.delete(db));
  }
  for (const table of await tables) {
    counts[table] =
      table === 'events'
        ? rowsOf(await deleteEventBatch(db, merchant, batch, sql`1`)).length
        : await deleteBatch(db, table, merchant, batch);
  }
  counts.idempotency_keys = await deleteBatch(
    db,
    'idempotency_keys',
    sql`partner_id = ${claim.partnerId}::uuid and strpos(body, ${claim.merchantId}) > 0`,
    batch,
  );
  counts.webhook_messages = await deleteBatch(
    db,
    'webhook_messages',
    sql`partner_id = ${claim.partnerId}::uuid and data->>'merchantId' = ${claim.merchantId}
      and type <> 'merchant.deleted'`,
    batch,
  );
  return counts;
}

/** The last step, once a round found nothing left. */
export async function finishPurge(db: Database, claim: PurgeClaim): Promise<boolean> {
  return db.transaction(async (tx) => {
    const gone = rowsOf<{ purgedAt: string }>(
      await tx.execute(sql`
        delete from merchants
        where id = ${claim.merchantId}::uuid and purge_claimed_until::text = ${claim.lease}
        returning to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "purgedAt"`),
    );
    const [row] = gone;
    if (!row) return false;
    await enqueueWebhookEvent(tx, {
      partnerId: claim.partnerId,
      type: 'merchant.deleted',
      data: { merchantId: claim.merchantId, deletedAt: claim.deletedAt, purgedAt: row.purgedAt },
    });
    return true;
  });
}
