import { sql } from 'drizzle-orm';
import type { Database } from '../../../db/client.js';
import { rowsOf } from '../../../db/read-rows.js';

// The monthly partitions of `events` (migration 0028; docs/decisions/events-partitioning.md):
// `events_pYYYY_MM` holds one UTC month of event_time, `events_before` the times before the first
// month, `events_after` those after the last (years 0001-9999 are all valid event times).

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

/**
 * Extends the months to this one and the `ahead` next ones (`events_extend_partitions`: a short
 * exclusive lock on `events`; rows events_after held for a new month move into it). Waits at most
 * `lockTimeoutMs` for the lock (a long export holds it off): the next run tries again, months ahead.
 * Returns the names created.
 */
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

/**
 * Whether a merchant that must keep events dated before `to` has rows in `table`: a live merchant
 * without a retention period (its own `retention_days`, its partner's default, else `serverDays`),
 * or whose cutoff (now minus the period) is before `to`. One probe of the partition's
 * merchant-leading index per such merchant.
 */
function blocked(table: string, to: Date, serverDays: number | undefined) {
  const period = sql`coalesce(m.retention_days, s.default_retention_days, ${serverDays ?? null}::int)`;
  return sql`exists (
    select 1 from merchants m left join partner_settings s on s.partner_id = m.partner_id
    where m.deleted_at is null
      and (${period} is null or ${to.toISOString()}::timestamptz > now() - make_interval(days => ${period}))
      and exists (select 1 from ${sql.identifier(table)} e where e.merchant_id = m.id))`;
}

/**
 * Empties, oldest first, the past monthly partitions whose every row is past its merchant's
 * retention (per-merchant `retention_days`, the partner's default, EVENT_RETENTION_DAYS), stopping
 * at the first one still needed. Each in its own transaction: the partition locked (inserts of that
 * month wait; no lock on `events` itself), checked again under the lock, its days'
 * `event_day_counts` removed (they counted only its rows, and TRUNCATE fires no delete trigger),
 * then truncated: one catalogue operation whatever its size. The emptied table stays attached, so
 * a late event of that month still has a place (dropping it would leave a hole in the ranges). The
 * statistics' aggregates stay, as with row deletes; the per-merchant retention pass removes the
 * ids (`event_ids`). Returns the names emptied.
 */
export async function truncateExpiredPartitions(
  db: Database,
  options: { serverDays: number | undefined; lockTimeoutMs?: number },
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
