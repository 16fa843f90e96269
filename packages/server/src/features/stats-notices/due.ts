import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import type { NoticeMerchant } from './notice-merchant.js';

/** A digest is sent from Monday 06:00 local until this many hours after (then that week's is skipped). */
const DIGEST_LATE_HOURS = 24;

export interface DueDigest extends NoticeMerchant {
  /** The week reported: Monday and Sunday, local dates; `startDate` is the notice's period. */
  startDate: string;
  endDate: string;
}

/**
 * Merchants owed their digest at `now`, in id order after `after`: their partner turned `statsDigest`
 * on, their local time is Monday 06:00 to Tuesday 06:00, and last week's digest is not in
 * `stats_notices`. The zone's arithmetic is PostgreSQL's (`at time zone`; every stored zone was
 * checked against its data when it was set).
 */
export async function dueDigests(db: Database, now: Date, after: string, limit: number): Promise<DueDigest[]> {
  const at = now.toISOString();
  return rowsOf<DueDigest>(
    await db.execute(sql`
      select m."merchantId", m."partnerId", m.livemode, m.timezone,
        to_char(m.monday - 7, 'YYYY-MM-DD') as "startDate", to_char(m.monday - 1, 'YYYY-MM-DD') as "endDate"
      from (
        select m.id::text as "merchantId", m.partner_id::text as "partnerId", p.livemode, m.timezone, m.id,
          (${at}::timestamptz at time zone m.timezone) as local,
          date_trunc('week', ${at}::timestamptz at time zone m.timezone)::date as monday
        from partner_settings s
        join partners p on p.id = s.partner_id
        join merchants m on m.partner_id = s.partner_id and m.deleted_at is null
        where s.stats_digest and m.id > ${after}::uuid
      ) m
      where m.local >= m.monday + interval '6 hours'
        and m.local < m.monday + make_interval(hours => ${6 + DIGEST_LATE_HOURS})
        and not exists (
          select 1 from stats_notices n
          where n.merchant_id = m.id and n.kind = 'digest' and n.period = to_char(m.monday - 7, 'YYYY-MM-DD'))
      order by m.id
      limit ${limit}`),
  );
}

export interface SpikeCandidate extends NoticeMerchant {
  /** The partner's `statsSpike.multiple`. */
  multiple: number;
  /** The hour's local date: the notice's period (at most one spike a day). */
  period: string;
}

/**
 * Merchants whose partner turned `statsSpike` on and that had no spike on the local date of the hour
 * starting at `hourStart`, in id order after `after`.
 */
export async function spikeCandidates(
  db: Database,
  hourStart: number,
  after: string,
  limit: number,
): Promise<SpikeCandidate[]> {
  const at = new Date(hourStart).toISOString();
  const rows = rowsOf<SpikeCandidate>(
    await db.execute(sql`
      select m."merchantId", m."partnerId", m.livemode, m.timezone, m.multiple, m.period
      from (
        select m.id::text as "merchantId", m.partner_id::text as "partnerId", p.livemode, m.timezone, m.id,
          s.stats_spike_multiple as multiple,
          to_char((${at}::timestamptz at time zone m.timezone)::date, 'YYYY-MM-DD') as period
        from partner_settings s
        join partners p on p.id = s.partner_id
        join merchants m on m.partner_id = s.partner_id and m.deleted_at is null
        where s.stats_spike and m.id > ${after}::uuid
      ) m
      where not exists (
        select 1 from stats_notices n where n.merchant_id = m.id and n.kind = 'spike' and n.period = m.period)
      order by m.id
      limit ${limit}`),
  );
  return rows.map((row) => ({ ...row, multiple: Number(row.multiple) }));
}

/** Deletes up to `limit` notices older than `days` (only this week's and today's are ever looked up). */
export async function expireNotices(db: Database, days: number, limit = 1_000): Promise<number> {
  return rowsOf(
    await db.execute(sql`
      delete from stats_notices
      where ctid = any(array(
        select ctid from stats_notices where created_at < now() - make_interval(days => ${days}) limit ${limit}))
      returning 1`),
  ).length;
}
