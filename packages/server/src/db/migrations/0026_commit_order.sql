-- Commit order without a lock (issue 37; docs/decisions/event-ordering.md). Custom migration:
-- drizzle-kit cannot express functions.
--
-- Before (0008): every event write bumped its merchant's `event_seqs` row and held that row lock to
-- commit, so one busy merchant's writes committed one at a time. After: `seq` comes from the
-- writing transaction's id, with no counter and no lock:
--   seq = base + ((xid - xid_base) << 13) + c
-- `c` is the row's number within the transaction (0 .. 8191; `storeEvents` numbers each merchant's
-- rows of a statement in array order, so they are one contiguous range). A transaction that starts
-- later can still commit earlier, so readers that resume by `seq > last` stop below the horizon
-- (`events_horizon_seq()`): the seq floor of the oldest transaction of this database still in
-- flight. Every transaction below it has ended, and every later one writes above it.
--
-- `base` is above every seq stored or handed out, so a stored `Last-Event-ID` resumes with no gap
-- and no repeat. Seqs stay below 10^15 (the 15 digits of the API's event ids; also under 2^53) for
-- about 1.2e11 transactions of the whole cluster after this one: 3.9 years at 1,000 xids/s.
--
-- In-flight writers of the old scheme hold `event_seqs` rows: the lock waits for them, so `base` is
-- read after the last of them committed (and counts numbers handed out to events deleted since).
LOCK TABLE "event_seqs" IN EXCLUSIVE MODE;
--> statement-breakpoint
DO $migration$
DECLARE
  base bigint := (SELECT coalesce(greatest((SELECT max(seq) FROM events), (SELECT max(last_seq) FROM event_seqs)), 0) + 1);
  xid_base bigint := pg_current_xact_id()::text::bigint;
BEGIN
  -- The lowest seq a transaction can write: its own range starts there (8192 numbers).
  EXECUTE format($f$
    CREATE FUNCTION events_seq_floor(x xid8) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS 'SELECT %s::bigint + ((x::text::bigint - %s::bigint) << 13)'$f$, base, xid_base);
  -- The first of `k` new numbers of the current transaction (its count kept in a transaction-local
  -- setting, so several statements of one transaction never reuse a number).
  EXECUTE format($f$
    CREATE FUNCTION events_take_seqs(k int) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $body$
    DECLARE
      used int := coalesce(nullif(current_setting('partner.event_seqs_used', true), ''), '0')::int;
      xid xid8 := pg_current_xact_id();
    BEGIN
      IF xid::text::bigint <= %s THEN
        RAISE EXCEPTION 'this transaction began before migration 0026; retry it' USING ERRCODE = '40001';
      END IF;
      IF used + k > 8192 THEN
        RAISE EXCEPTION 'a transaction can write at most 8192 events of a merchant (asked for %%)', used + k
          USING ERRCODE = '54000', HINT = 'split the insert into several transactions';
      END IF;
      IF events_seq_floor(xid) + used + k > 999999999999999 THEN
        RAISE EXCEPTION 'event seqs are exhausted (15 digits); see docs/decisions/event-ordering.md'
          USING ERRCODE = '54000';
      END IF;
      PERFORM set_config('partner.event_seqs_used', (used + k)::text, true);
      RETURN events_seq_floor(xid) + used;
    END
    $body$$f$, xid_base);
END
$migration$;
--> statement-breakpoint
DROP TABLE "event_seqs";
--> statement-breakpoint
-- The horizon: the oldest transaction still in flight in this database (the snapshot's xmax when
-- none). The snapshot's in-progress xids are cluster-wide; those that pg_stat_activity shows running
-- in another database cannot write our events and are left out (a transaction it does not show,
-- e.g. a prepared one, is kept: conservative). Read in the same statement as the rows it bounds.
CREATE FUNCTION events_horizon_seq() RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT events_seq_floor(coalesce(
    (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
     WHERE x::xid NOT IN (
       SELECT a.backend_xid FROM pg_stat_activity a
       WHERE a.backend_xid IS NOT NULL AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))),
    pg_snapshot_xmax(pg_current_snapshot())))
$$;
--> statement-breakpoint
-- Other insert paths (backfills, psql, tests' raw inserts) leave seq out: the next number of the
-- transaction, one row at a time (the ingestion statement sets seq and never fires this).
CREATE OR REPLACE FUNCTION events_assign_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.seq := events_take_seqs(1);
  RETURN NEW;
END
$$;
