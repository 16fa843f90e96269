import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { rowsOf } from '../../../db/read-rows.js';

// The monthly partitions of `events`: `events_pYYYY_MM` holds one UTC month of event_time, `events_before` the times
// before the first month, `events_after` those after the last.

/** Months created ahead of the current one, so an insert never waits for a partition. */
export const MONTHS_AHEAD = 3;

const MONTHLY = /^events_p(\d{4})_(\d{2})$/;

export interface MonthlyPartition {
  name: string;
  /** The month's first instant (inclusive), UTC. */
  from: Date;
  /** The next month's first instant (exclusive). */
  to: Date;
}

/** The monthly partitions attached to `events`, oldest first. */
export async function monthlyPartitions(db: Database): Promise<MonthlyPartition[]> {
  const rows = rowsOf<{ name: string }>(
    await db.execute(sql`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'events'::regclass order by c.relname`),
  );
  const months: MonthlyPartition[] = [];
  for (const { name } of rows) {
    const match = MONTHLY.exec(name);
    if (!match) continue;
    const year = Number(match[1]);
    const month = Number(match[2]) - 1;
    const from = new Date(Date.UTC(2000, month, 1));
    from.setUTCFullYear(year);
    const to = new Date(from);
    to.setUTCMonth(month + 1);
    months.push({ name, from, to });
  }
  return months;
}

/** Extends the months to this one and the `ahead` next ones. */
export async function createPartitionsAhead(
  db: Database,
  ahead = MONTHS_AHEAD,
  lockTimeoutMs = 2000,
): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('lock_timeout', ${String(lockTimeoutMs)}, true)`);
    const rows = rowsOf<{ name: string }>(
      await tx.execute(sql`select events_extend_partitions(now() + make_interval(months => ${ahead}::int)) as name`),
    );
    return rows.map((row) => row.name);
  });
}

/** Whether a merchant that must keep events dated before `to` has rows in `table`. */
function blocked(table: string, to: Date, serverDays: number | undefined) {
  return sql`exists (
    select 1 from ${keepers(to, serverDays)}
      and exists (select 1 from ${sql.identifier(table)} e where e.merchant_id = m.id))`;
}

/** `merchants m` (with `partner_settings s`) filtered to those that must keep events dated before `to`. */
function keepers(to: Date, serverDays: number | undefined) {
  const period = sql`coalesce(m.retention_days, s.default_retention_days, ${serverDays ?? null}::int)`;
  return sql`merchants m left join partner_settings s on s.partner_id = m.partner_id
    where m.deleted_at is null
      and (${period} is null or ${to.toISOString()}::timestamptz > now() - make_interval(days => ${period}))`;
}

/** Rows of a month read per statement when removing their ids. */
const PARTITION_IDS_BATCH = 5_000;

/** Removes the ids of a month's events before the month is emptied: nothing else removes them. */
export async function deletePartitionIds(
  db: Database,
  part: MonthlyPartition,
  serverDays: number | undefined,
  batch = PARTITION_IDS_BATCH,
): Promise<number> {
  const table = sql.identifier(part.name);
  let after: { merchant_id: string; event_time: string; id: string } | undefined;
  let deleted = 0;
  for (;;) {
    const from = after
      ? sql`where (merchant_id, event_time, id) > (${after.merchant_id}::uuid, ${after.event_time}::timestamptz, ${after.id})`
      : sql``;
    const [last] = rowsOf<{ merchant_id: string; event_time: string; id: string; read: number; deleted: number }>(
      await db.transaction(async (tx) => {
        // One probe of event_ids_pkey per row (a hash join would read event_ids whole).
        await tx.execute(
          sql`select set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`,
        );
        return tx.execute(sql`
          with k as (
            select merchant_id, event_time, id from ${table} ${from}
            order by merchant_id, event_time, id limit ${batch}
          ), d as (
            delete from event_ids i using k
            where i.merchant_id = k.merchant_id and i.id = k.id
              and k.merchant_id not in (select m.id from ${keepers(part.to, serverDays)})
            returning 1
          )
          select merchant_id::text, to_char(event_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as event_time,
            id, (select count(*) from k)::int as read, (select count(*) from d)::int as deleted
          from k order by merchant_id desc, event_time desc, id desc limit 1`);
      }),
    );
    if (!last) return deleted;
    deleted += last.deleted;
    if (last.read < batch) return deleted;
    after = last;
  }
}

/**
 * Empties, oldest first, the past monthly partitions whose every row is past its merchant's retention. The emptied
 * table stays attached, so a late event of that month still has a place.
 */
export async function truncateExpiredPartitions(
  db: Database,
  options: { serverDays: number | undefined; lockTimeoutMs?: number; idsBatch?: number },
): Promise<string[]> {
  const emptied: string[] = [];
  const now = Date.now();
  for (const part of await monthlyPartitions(db)) {
    if (part.to.getTime() > now) break;
    const table = sql.identifier(part.name);
    const [state] = rowsOf<{ empty: boolean; blocked: boolean }>(
      await db.execute(
        sql`select not exists (select 1 from ${table}) as empty, ${blocked(part.name, part.to, options.serverDays)} as blocked`,
      ),
    );
    if (state?.empty) continue;
    if (state?.blocked) break;
    await deletePartitionIds(db, part, options.serverDays, options.idsBatch);
    const done = await db.transaction(async (tx) => {
      await tx.execute(sql`select set_config('lock_timeout', ${String(options.lockTimeoutMs ?? 2000)}, true)`);
      await tx.execute(sql`lock table ${table} in access exclusive mode`);
      const [again] = rowsOf<{ blocked: boolean }>(
        await tx.execute(sql`select ${blocked(part.name, part.to, options.serverDays)} as blocked`),
      );
      // A late event of a merchant that keeps its events came in meanwhile.
      if (again?.blocked) return false;
      await tx.execute(sql`
        delete from event_day_counts
        where day >= (${part.from.toISOString()}::timestamptz at time zone 'UTC')::date
          and day < (${part.to.toISOString()}::timestamptz at time zone 'UTC')::date`);
      await tx.execute(sql`truncate ${table}`);
      return true;
    });
    if (!done) break;
    emptied.push(part.name);
  }
  return emptied;
}
