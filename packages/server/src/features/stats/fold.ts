import { setImmediate } from 'node:timers/promises';
import { Param, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/read-rows.js';
import { type CellColumns, FoldDeltas } from './fold-rows.js';

/**
 * Pending ranges taken by one fold, and the events they may hold (a first range is taken whatever
 * its size). A larger fold shares more hour, day and week rows between events: 100 ranges of 500
 * events cost 24 µs an event against 33 for 10 (bench/README.md part 7). The events bound the
 * process's grouping (about 40 µs an event when every event has buckets of its own) and each
 * statement, which must end well within the statement timeout (5 s) on a loaded machine.
 */
const FOLD_ROWS = 100;
export const FOLD_EVENTS = 20_000;

/**
 * The advisory lock class of a merchant's aggregates (the key: `hashtext(merchant_id::text)`): every
 * fold holds it shared for the merchants it folds, a recount (recount.ts) exclusively.
 */
export const RECOUNT_LOCK_CLASS = 73_410_034;

/**
 * The levels the fold keeps, in minutes: 15-minute buckets, UTC hours, UTC days and 7-day weeks
 * from the epoch (migration 0034). A 30-day summary unites about 12 sketches instead of 60.
 */
export const GRAINS = [15, 60, 1440, 10_080] as const;

/**
 * The levels of `stat_dimensions`: UTC hours, days and 7-day weeks (from the epoch, a Thursday). A
 * 30-day breakdown reads 6 or 12 rows per value instead of 30; its cost grows with rows, not bytes
 * (10M events, 977 paths: 82 ms on daily rows, 36 ms on weekly ones, bench/README.md part 6). No
 * 15-minute rows: they were half the fold's rows and only a zone whose midnight is not on the hour
 * reads them, at a range's two edges, which the breakdown reads from the events (breakdown.ts).
 */
export const DIMENSION_GRAINS = [60, 1440, 10_080] as const;

/**
 * What one event adds to the aggregates, read from `e` (an events row) and `h.md5` (md5 of its
 * muid): its merchant, 15-minute bucket, name, sparse sketch entry (sketch.ts: the first 32 bits of
 * the md5 and the rank from the next 32) and the data of PageView/Purchase.
 */
export const FACT_COLUMNS = sql`e.merchant_id,
        date_bin('15 minutes', e.event_time, timestamptz '1970-01-01 00:00:00+00') as bucket,
        e.event_name collate "C" as event_name,
        decode(substr(h.md5, 1, 8) || lpad(to_hex(coalesce(nullif(position('1' in (('x' || substr(h.md5, 9, 8))::bit(32))::text), 0), 33)), 2, '0'), 'hex') as entry,
        case when e.event_name in ('PageView', 'Purchase') then e.raw_data::jsonb end as d`;

/** `date_bin` to the level `g.grain` (minutes) from the epoch. */
const binned = (column: SQL) =>
  sql`date_bin(make_interval(mins => g.grain), ${column}, timestamptz '1970-01-01 00:00:00+00')`;

/** A CTE `name(grain)` of the levels `grains` (minutes). */
const levels = (name: string, grains: readonly number[]) =>
  sql`${sql.identifier(name)}(grain) as (select unnest(${`{${grains.join(',')}}`}::int[]))`;

/**
 * The upsert of `stat_revenue` at the levels of CTE `g` from a CTE `f` of FACT_COLUMNS rows (`d`
 * only needed for Purchase events): per level, bucket and currency, purchases and amounts added.
 */
const REVENUE_UPSERT = sql`
      insert into stat_revenue as t (merchant_id, grain, bucket, currency, purchases, amount)
      select f.merchant_id, g.grain, ${binned(sql`f.bucket`)}, upper(d->>'currency'), count(*), sum((d->>'value')::numeric)
      from f cross join g
      where event_name = 'Purchase' and jsonb_typeof(d) = 'object'
        and jsonb_typeof(d->'currency') = 'string' and d->>'currency' ~ '^[A-Za-z]{3}$'
        and (jsonb_typeof(d->'value') = 'number'
          or (jsonb_typeof(d->'value') = 'string' and d->>'value' ~ '^-?[0-9]{1,30}(\\.[0-9]{1,30})?$'))
      group by 1, 2, 3, 4
      order by 1, 2, 3, 4
      on conflict (merchant_id, grain, bucket, currency) do update
      set purchases = t.purchases + excluded.purchases, amount = t.amount + excluded.amount`;

/**
 * The dimension values of the PageView rows of a CTE `f` of FACT_COLUMNS rows: rows (merchant_id,
 * dimension, bucket, value, entry), one per event and dimension. The SQL form of fold-rows.ts's rules.
 */
export const DIMENSION_VALUES = sql`
      select f.merchant_id, v.dimension collate "C" as dimension, f.bucket, coalesce(nullif(left(v.value, 200), ''), '(none)') collate "C" as value, f.entry
      from f
      cross join lateral (select case when jsonb_typeof(f.d->'url') = 'string' then f.d->>'url' end as url) u
      cross join lateral (values
        ('path', case when jsonb_typeof(f.d->'path') = 'string' then f.d->>'path' end),
        ('referrer', case when jsonb_typeof(f.d->'referrer') = 'string'
          then lower(substring(f.d->>'referrer' from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)')) end),
        ('utm_source', case when u.url like '%utm_source=%' then replace(substring(u.url from '[?&]utm_source=([^&#]*)'), '+', ' ') end),
        ('utm_medium', case when u.url like '%utm_medium=%' then replace(substring(u.url from '[?&]utm_medium=([^&#]*)'), '+', ' ') end),
        ('utm_campaign', case when u.url like '%utm_campaign=%' then replace(substring(u.url from '[?&]utm_campaign=([^&#]*)'), '+', ' ') end)
      ) as v(dimension, value)
      where f.event_name = 'PageView' and jsonb_typeof(f.d) = 'object'`;

/**
 * The upserts of `stat_buckets`, `stat_revenue` and `stat_dimensions` at the levels `grains` from a
 * CTE `f` of FACT_COLUMNS rows (CTEs `g`, `dg`, `bk`, `bq`, `b`, `r`, `dv`, `dk`, `dq`, `dm`): per
 * level, bucket and name, and per bucket for all names (''), counts and sums added, sketches
 * merged, in key order (`stat_dimensions` at `dimensionGrains`). The SQL form of the rules, for
 * the recount (recount.ts); the live fold groups in the process (fold-rows.ts), held equal by
 * test/fast/stats-fold.test.ts.
 * Each level is grouped from the 15-minute sketches (`bq`, `dq`: a sparse sketch is its entries
 * end to end), entries made distinct per 15-minute bucket only.
 */
export function aggregateUpserts(grains: readonly number[], dimensionGrains: readonly number[] = grains) {
  return sql`${levels('g', grains)}, ${levels('dg', dimensionGrains)}, bk as (
      select merchant_id, bucket, event_name, entry, count(*) as n from f group by 1, 2, 3, 4
    ), bq as (
      select merchant_id, bucket, event_name, sum(n) as n, string_agg(entry, ''::bytea) as entries from bk group by 1, 2, 3
    ), b as (
      insert into stat_buckets as t (merchant_id, grain, bucket, event_name, events, visitors)
      select k.merchant_id, g.grain, ${binned(sql`k.bucket`)}, m.name, sum(k.n), stats_hll_compact(string_agg(k.entries, ''::bytea))
      from bq k cross join g cross join lateral (values (k.event_name), (''::text collate "C")) m(name)
      group by 1, 2, 3, 4
      order by 1, 2, 3, 4
      on conflict (merchant_id, grain, bucket, event_name) do update
      set events = t.events + excluded.events, visitors = stats_hll_merge(t.visitors, excluded.visitors),
        visitor_count = null
    ), r as (${REVENUE_UPSERT}
    ), dv as (${DIMENSION_VALUES}
    ), dk as (
      select merchant_id, dimension, bucket, value, entry, count(*) as n from dv group by 1, 2, 3, 4, 5
    ), dq as (
      select merchant_id, dimension, bucket, value, sum(n) as n, string_agg(entry, ''::bytea) as entries from dk group by 1, 2, 3, 4
    ), dm as (
      insert into stat_dimensions as t (merchant_id, dimension, grain, bucket, value, events, visitors)
      select k.merchant_id, k.dimension, g.grain, ${binned(sql`k.bucket`)}, k.value, sum(k.n), stats_hll_compact(string_agg(k.entries, ''::bytea))
      from dq k cross join dg g
      group by 1, 2, 3, 4, 5
      order by 1, 2, 3, 4, 5
      on conflict (merchant_id, dimension, grain, bucket, value) do update
      set events = t.events + excluded.events, visitors = stats_hll_merge(t.visitors, excluded.visitors)
    )`;
}

/**
 * Adds stored events to the statistics' aggregates: takes up to `limit` pending `seq` ranges
 * (`stat_pending`, written by `storeEvents`), reads their events and upserts `stat_buckets`,
 * `stat_revenue` and `stat_dimensions`, in one transaction (the ranges leave the queue in the
 * transaction that counts them, so each is counted once). Ranges locked by another fold are
 * skipped, or with `wait` waited for (then gone); the upserts run in key order, so two folds wait
 * for each other, never deadlock. A merchant whose buckets are being recounted (RECOUNT_LOCK_CLASS)
 * is skipped, or with `wait` waited for. Returns the number of ranges folded.
 *
 * The first statement claims the ranges, upserts the revenue in SQL (exact decimal sums) and
 * returns the events; the sketches, counts and dimension values are grouped here (fold-rows.ts)
 * and sent back as one upsert per table. Grouping in SQL cost PostgreSQL twice as much, most of
 * it the dimensions' rows (bench/README.md part 7). The rules are those of the SQL that the
 * recount and migrations 0027 and 0031 use (aggregateUpserts), which test/fast/stats-fold.test.ts
 * holds the same: docs/decisions/stats.md.
 */
export async function foldPendingStats(
  db: Database,
  limit = FOLD_ROWS,
  wait = false,
  merchantId?: string,
): Promise<number> {
  return (await foldPass(db, limit, wait, merchantId)).ranges;
}

/**
 * One fold (foldPendingStats), with whether it was full: it reached FOLD_ROWS ranges or half of
 * FOLD_EVENTS events, so more may be waiting (the fold job then runs again at once; after a
 * smaller pass it waits for the next insert's wake-up, so a trickle is folded about once a second
 * in one pass instead of one pass per insert).
 */
export async function foldPass(
  db: Database,
  limit = FOLD_ROWS,
  wait = false,
  merchantId?: string,
): Promise<{ ranges: number; full: boolean }> {
  const lock = wait ? sql`for update` : sql`for update skip locked`;
  // A merchant being recounted (recount.ts holds its lock exclusively) is skipped, or waited for.
  const merchantFree = wait
    ? sql`pg_advisory_xact_lock_shared(${RECOUNT_LOCK_CLASS}::int, hashtext(merchant_id::text)) is not null`
    : sql`pg_try_advisory_xact_lock_shared(${RECOUNT_LOCK_CLASS}::int, hashtext(merchant_id::text))`;
  return db.transaction(async (tx) => {
    const rows = rowsOf<ClaimedEvent>(
      await tx.execute(sql`
        with p as (
          delete from stat_pending
          where id in (
            select id from (
              select id, n, sum(n) over (order by id) as upto from (
                select id, last_seq - first_seq + 1 as n from stat_pending
                where ${merchantId ? sql`merchant_id = ${merchantId}::uuid and ` : sql``}${merchantFree} order by id limit ${limit} ${lock}
              ) c
            ) w where upto - n < ${FOLD_EVENTS}) -- no range started past FOLD_EVENTS
          returning merchant_id, first_seq, last_seq, first_time, last_time
        ), f as materialized (
          select e.merchant_id, date_bin('15 minutes', e.event_time, timestamptz '1970-01-01 00:00:00+00') as bucket,
            e.event_name collate "C" as event_name, e.muid,
            case when e.event_name = 'PageView' then e.raw_data end as page,
            case when e.event_name = 'Purchase' then e.raw_data::jsonb end as d
          from p
          cross join lateral (
            -- The time bounds prune the read to the range's months (events is partitioned, migration 0028).
            select * from events where merchant_id = p.merchant_id and seq between p.first_seq and p.last_seq
              and event_time between p.first_time and p.last_time offset 0
          ) e
        ), ${levels('g', GRAINS)}, r as (${REVENUE_UPSERT})
        select c.ranges, c.spanned, f.merchant_id::text as merchant_id, (extract(epoch from f.bucket) * 1000)::float8 as quarter,
          f.event_name, f.muid, f.page
        from (select count(*)::int as ranges, coalesce(sum(last_seq - first_seq + 1), 0)::float8 as spanned from p) c
        left join f on true`),
    );
    const ranges = Number(rows[0]?.ranges ?? 0);
    const result = { ranges, full: ranges >= limit || Number(rows[0]?.spanned ?? 0) >= FOLD_EVENTS / 2 };
    if (ranges === 0 || rows[0]?.merchant_id === null) return result;
    // Grouped in slices, the event loop let go between them: 20k events are up to ~800 ms of grouping.
    const grouped = new FoldDeltas(GRAINS, DIMENSION_GRAINS);
    for (let at = 0; at < rows.length; at++) {
      const e = rows[at]!;
      grouped.add({
        merchantId: e.merchant_id!,
        quarter: Number(e.quarter),
        eventName: e.event_name,
        muid: e.muid,
        page: e.page,
      });
      if (at % 500 === 499) await setImmediate();
    }
    const d = grouped.deltas();
    const list = (values: readonly (string | number)[], type: string) => sql`${new Param(values)}::${sql.raw(type)}`;
    const cells = (c: CellColumns) =>
      sql`unnest(${list(c.slot, 'int[]')}, ${list(c.key, 'int[]')}, ${list(c.events, 'bigint[]')}, ${list(c.visitors, 'text[]')}) as c(s, k, e, v)
        join s on s.i = c.s`;
    await tx.execute(sql`
      with s as materialized (
        select (${list(d.merchants, 'text[]')})[m]::uuid as merchant_id, g, to_timestamp(b) as bucket, i
        from unnest(${list(d.slots.m, 'int[]')}, ${list(d.slots.g, 'int[]')}, ${list(d.slots.b, 'float8[]')}) with ordinality as s(m, g, b, i)
      ), b as (
        insert into stat_buckets as t (merchant_id, grain, bucket, event_name, events, visitors)
        select s.merchant_id, s.g, s.bucket, (${list(d.names, 'text[]')})[c.k] collate "C", c.e, stats_hll_compact(decode(c.v, 'hex'))
        from ${cells(d.bucketCells)}
        order by 1, 2, 3, 4
        on conflict (merchant_id, grain, bucket, event_name) do update
        set events = t.events + excluded.events, visitors = stats_hll_merge(t.visitors, excluded.visitors),
          visitor_count = null
      ), dm as (
        insert into stat_dimensions as t (merchant_id, dimension, grain, bucket, value, events, visitors)
        select s.merchant_id, (${list(d.dimensions, 'text[]')})[c.k] collate "C", s.g, s.bucket, (${list(d.values, 'text[]')})[c.k] collate "C",
          c.e, stats_hll_compact(decode(c.v, 'hex'))
        from ${cells(d.dimensionCells)}
        order by 1, 2, 3, 4, 5
        on conflict (merchant_id, dimension, grain, bucket, value) do update
        set events = t.events + excluded.events, visitors = stats_hll_merge(t.visitors, excluded.visitors)
      )
      select 1`);
    return result;
  });
}

/** A row of the fold's first statement: the ranges claimed, then one event each (none: nulls). */
interface ClaimedEvent {
  ranges: number;
  spanned: number;
  merchant_id: string | null;
  quarter: number | string;
  event_name: string;
  muid: string;
  page: string | null;
}

/**
 * Folds until nothing is pending, waiting for folds in progress elsewhere (a stats read calls it
 * first: its answer then includes every event stored before it).
 */
export async function foldAllPendingStats(db: Database): Promise<void> {
  // Until a pass finds nothing (a pass may come back short after waiting); bounded under a flood.
  for (let pass = 0; pass < 10 && (await foldPendingStats(db, FOLD_ROWS, true)) > 0; pass++) {}
}

/**
 * A stats read's fold: the merchant's pending ranges, waiting for folds in progress elsewhere (their
 * deleted ranges stay visible until they commit). Nothing pending costs one small query, not the
 * fold's statement.
 */
export async function foldPendingStatsOf(db: Database, merchantId: string): Promise<void> {
  for (let pass = 0; pass < 10; pass++) {
    const [row] = rowsOf<{ pending: boolean }>(
      await db.execute(
        sql`select exists (select 1 from stat_pending where merchant_id = ${merchantId}::uuid) as pending`,
      ),
    );
    if (!row?.pending) return;
    await foldPendingStats(db, FOLD_ROWS, true, merchantId);
  }
}
