-- Day counts as delta rows (issue 37; docs/decisions/day-count-deltas.md). 0003's triggers upserted
-- one row per (merchant, UTC day, event name) and held its lock to commit, so a hot merchant's
-- concurrent writers waited for each other there. Now every statement appends its own rows (no
-- unique key, no ON CONFLICT, no lock shared between writers), deletes append negative ones, readers
-- sum(n) by key, and jobs/day-count-compaction.ts merges each key's rows into one (`merged`).
--
-- Existing rows are one per key already: merged (ADD COLUMN with DEFAULT true fills them without
-- a rewrite; new rows get false). Rows at zero are dropped (a missing key sums to 0).
ALTER TABLE "event_day_counts" DROP CONSTRAINT "event_day_counts_pkey";
--> statement-breakpoint
ALTER TABLE "event_day_counts" ADD COLUMN "merged" boolean DEFAULT true NOT NULL;
--> statement-breakpoint
ALTER TABLE "event_day_counts" ALTER COLUMN "merged" SET DEFAULT false;
--> statement-breakpoint
DELETE FROM "event_day_counts" WHERE "n" = 0;
--> statement-breakpoint
-- Readers' sums and the compaction's merge, by key.
CREATE INDEX "event_day_counts_key_idx" ON "event_day_counts" USING btree ("merchant_id","day","event_name");
--> statement-breakpoint
-- The keys the compaction has to look at: those with rows appended since it last merged them.
CREATE INDEX "event_day_counts_unmerged_idx" ON "event_day_counts" USING btree ("merchant_id","day","event_name") WHERE NOT "merged";
--> statement-breakpoint
-- The triggers (0003, moved onto the partitioned events by 0028) keep their names; their functions
-- now append. One row per (merchant, day, name) per statement.
CREATE OR REPLACE FUNCTION event_day_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_day_counts (merchant_id, day, event_name, n)
  SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date, event_name, count(*)
  FROM inserted
  GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION event_day_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_day_counts (merchant_id, day, event_name, n)
  SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date, event_name, -count(*)
  FROM deleted
  GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION event_day_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_day_counts (merchant_id, day, event_name, n)
  SELECT merchant_id, day, event_name, sum(n) FROM (
    SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date AS day, event_name, -1 AS n FROM deleted
    UNION ALL
    SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date, event_name, 1 FROM inserted
  ) m
  GROUP BY 1, 2, 3
  HAVING sum(n) <> 0;
  RETURN NULL;
END
$$;
