-- Events partitioned by month of event_time (issue 36; docs/decisions/events-partitioning.md).
-- Custom migration: drizzle-kit cannot express partitions, the copy or the triggers.
--
-- 1. Idempotency moves to `event_ids`: a unique key of a partitioned table must hold the partition
--    key, so (merchant_id, id) alone can no longer be one on `events`. The ingestion statement
--    (features/events/ingest/store-events.ts) inserts the batch's ids here first, ON CONFLICT DO
--    NOTHING, and inserts into `events` only the ids it won. An event delete removes its id in the
--    same statement (features/events/delete-events.ts), an emptied month its ids by the month's keys
--    (features/events/partitions/), both through this table's key: no other index to write per event.
--    `event_time` finds an event by id alone (the export's `afterId`) through events_merchant_time_idx.
CREATE TABLE "event_ids" (
	"merchant_id" uuid NOT NULL,
	"id" text NOT NULL,
	"event_time" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
-- 2. The old table steps aside with its indexes (their names are the new table's).
ALTER TABLE "events" RENAME TO "events_unpartitioned";
--> statement-breakpoint
ALTER TABLE "events_unpartitioned" DROP CONSTRAINT "events_pkey";
--> statement-breakpoint
DROP INDEX "events_merchant_time_idx";
--> statement-breakpoint
DROP INDEX "events_merchant_name_time_idx";
--> statement-breakpoint
DROP INDEX "events_merchant_seq_idx";
--> statement-breakpoint
DROP INDEX "events_merchant_muid_time_idx";
--> statement-breakpoint
-- The same columns (whatever earlier migrations added), range-partitioned by event_time. No key:
-- one would have to hold the partition key, uniqueness by (merchant_id, id) is event_ids' job, and
-- events_merchant_time_idx finds a row by (merchant_id, id, event_time) (one index less per event).
CREATE TABLE "events" (LIKE "events_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("event_time");
--> statement-breakpoint
-- 3. Monthly partitions (UTC months, events_pYYYY_MM) between two catch-alls: events_before (from
--    MINVALUE, event times back to year 0001) and events_after (to MAXVALUE, up to 9999). No DEFAULT
--    partition: with one, PostgreSQL cannot read the months in order (an ordered Append), and an
--    event list page would open every month (a Merge Append) instead of the one or two it needs.
--
--    events_extend_partitions(until) adds the months from events_after's lower bound up to the
--    month holding `until`, in one transaction: events_after is detached (a short exclusive lock on
--    `events`), each month created with the rows events_after held for it (clock-skewed events) and
--    attached (a CHECK added first spares ATTACH its validation scan), events_after attached again
--    from the new bound. Returns the months created. Used by this migration and by
--    jobs/event-partitions.ts (features/events/partitions/).
CREATE OR REPLACE FUNCTION events_extend_partitions(until timestamptz) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  stop timestamptz := (date_trunc('month', until AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
  lo timestamptz;
  hi timestamptz;
  lo_text text;
  hi_text text;
  part text;
BEGIN
  SELECT substring(pg_get_expr(c.relpartbound, c.oid) from 'FROM \(''([^'']+)''\)')::timestamptz INTO lo
  FROM pg_class c WHERE c.oid = 'events_after'::regclass;
  IF lo IS NULL OR lo >= stop THEN
    RETURN;
  END IF;
  ALTER TABLE events DETACH PARTITION events_after;
  WHILE lo < stop LOOP
    hi := (lo AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC';
    part := 'events_p' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');
    lo_text := to_char(lo AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00');
    hi_text := to_char(hi AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00');
    EXECUTE format('CREATE TABLE %I (LIKE events INCLUDING DEFAULTS)', part);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (event_time >= %L AND event_time < %L)',
      part, part || '_range', lo_text, hi_text);
    EXECUTE format('WITH moved AS (DELETE FROM events_after WHERE event_time >= %L AND event_time < %L RETURNING *)
      INSERT INTO %I SELECT * FROM moved', lo_text, hi_text, part);
    EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo_text, hi_text);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part, part || '_range');
    RETURN NEXT part;
    lo := hi;
  END LOOP;
  EXECUTE format('ALTER TABLE events_after ADD CONSTRAINT events_after_range CHECK (event_time >= %L)', hi_text);
  EXECUTE format('ALTER TABLE events ATTACH PARTITION events_after FOR VALUES FROM (%L) TO (MAXVALUE)', hi_text);
  ALTER TABLE events_after DROP CONSTRAINT events_after_range;
END
$$;
--> statement-breakpoint
-- 4. The months from the first that holds rows (within the last ten years; older times go to
--    events_before) to the last that does (within a year ahead; later ones stay in events_after),
--    and at least this month and the three after it.
DO $$
DECLARE
  first_month timestamptz;
  last_month timestamptz;
BEGIN
  SELECT date_trunc('month', min(event_time) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', max(event_time)
  INTO first_month, last_month
  FROM events_unpartitioned
  WHERE event_time >= now() - interval '10 years' AND event_time < now() + interval '1 year';
  first_month := least(first_month, date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC');
  EXECUTE format('CREATE TABLE events_before PARTITION OF events FOR VALUES FROM (MINVALUE) TO (%L)',
    to_char(first_month AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00'));
  EXECUTE format('CREATE TABLE events_after PARTITION OF events FOR VALUES FROM (%L) TO (MAXVALUE)',
    to_char(first_month AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS+00'));
  PERFORM events_extend_partitions(greatest(last_month, now() + interval '3 months'));
END
$$;
--> statement-breakpoint
-- 5. The rows, copied once: the new table has no trigger yet, so nothing is counted, notified or
--    numbered twice (seq, received_at and consent are copied as they are).
INSERT INTO "events" SELECT * FROM "events_unpartitioned";
--> statement-breakpoint
-- The indexes once the rows are in: one build per partition, faster than growing them row by row
-- (300,000 rows: 23 s with the indexes first, see the decision for the figures).
CREATE INDEX "events_merchant_time_idx" ON "events" USING btree ("merchant_id","event_time","id");
--> statement-breakpoint
CREATE INDEX "events_merchant_name_time_idx" ON "events" USING btree ("merchant_id","event_name","event_time","id");
--> statement-breakpoint
CREATE INDEX "events_merchant_seq_idx" ON "events" USING btree ("merchant_id","seq");
--> statement-breakpoint
CREATE INDEX "events_merchant_muid_time_idx" ON "events" USING btree ("merchant_id","muid","event_time","id");
--> statement-breakpoint
INSERT INTO "event_ids" ("merchant_id", "id", "event_time")
SELECT "merchant_id", "id", "event_time" FROM "events_unpartitioned";
--> statement-breakpoint
ALTER TABLE "event_ids" ADD CONSTRAINT "event_ids_pkey" PRIMARY KEY ("merchant_id","id");
--> statement-breakpoint
-- 6. The old table's triggers (notify, day counts, seq, and whatever earlier migrations added), now
--    on the partitioned table: a row trigger is cloned onto every partition, a statement trigger
--    (transition tables included) fires for statements on `events`.
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger
    WHERE tgrelid = 'events_unpartitioned'::regclass AND NOT tgisinternal
    ORDER BY tgname
  LOOP
    EXECUTE format('DROP TRIGGER %I ON events_unpartitioned', t.tgname);
    EXECUTE regexp_replace(t.def, ' ON (public\.)?events_unpartitioned ', ' ON events ');
  END LOOP;
END
$$;
--> statement-breakpoint
DROP TABLE "events_unpartitioned";
--> statement-breakpoint
-- 7. The statistics' queue (0020) records the event_time range of each batch too, so the fold reads
--    a range's events from their months only (features/stats/fold.ts). Ranges queued before this
--    migration are unbounded.
ALTER TABLE "stat_pending" ADD COLUMN "first_time" timestamp (3) with time zone DEFAULT '-infinity' NOT NULL;
--> statement-breakpoint
ALTER TABLE "stat_pending" ADD COLUMN "last_time" timestamp (3) with time zone DEFAULT 'infinity' NOT NULL;
