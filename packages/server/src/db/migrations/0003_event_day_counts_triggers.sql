-- Keeps event_day_counts exact (custom migration; drizzle-kit cannot express triggers).
-- Statement-level triggers with transition tables: one aggregate per statement, not per row, and
-- whatever path inserts into events (the collector, COPY, a backfill) keeps the counts exact.
-- Ingestion uses ON CONFLICT DO NOTHING, so `inserted` holds only the rows really inserted.
-- Rows are upserted in key order so concurrent statements lock rollup rows in one order.
CREATE OR REPLACE FUNCTION event_day_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_day_counts AS c (merchant_id, day, event_name, n)
  SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date, event_name, count(*)
  FROM inserted
  GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT (merchant_id, day, event_name) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_day_counts_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION event_day_counts_add();
--> statement-breakpoint
-- Deletes (retention, cleanup) subtract what they removed (a row may stay at zero: harmless).
CREATE OR REPLACE FUNCTION event_day_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE event_day_counts AS c SET n = c.n - d.n
  FROM (
    SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date AS day, event_name, count(*) AS n
    FROM deleted
    GROUP BY 1, 2, 3
  ) d
  WHERE c.merchant_id = d.merchant_id AND c.day = d.day AND c.event_name = d.event_name;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_day_counts_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS deleted
  FOR EACH STATEMENT EXECUTE FUNCTION event_day_counts_remove();
--> statement-breakpoint
-- Events are append-only; an UPDATE that moves an event to another day or name is applied as a
-- remove plus an add, so even a manual fix keeps the counts exact.
CREATE OR REPLACE FUNCTION event_day_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE event_day_counts AS c SET n = c.n - d.n
  FROM (
    SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date AS day, event_name, count(*) AS n
    FROM deleted
    GROUP BY 1, 2, 3
  ) d
  WHERE c.merchant_id = d.merchant_id AND c.day = d.day AND c.event_name = d.event_name;
  INSERT INTO event_day_counts AS c (merchant_id, day, event_name, n)
  SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date, event_name, count(*)
  FROM inserted
  GROUP BY 1, 2, 3
  ORDER BY 1, 2, 3
  ON CONFLICT (merchant_id, day, event_name) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_day_counts_update AFTER UPDATE ON events
  REFERENCING OLD TABLE AS deleted NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION event_day_counts_move();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION event_day_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE event_day_counts;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_day_counts_truncate AFTER TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION event_day_counts_truncate();
--> statement-breakpoint
-- Events stored before this migration.
INSERT INTO event_day_counts (merchant_id, day, event_name, n)
SELECT merchant_id, (event_time AT TIME ZONE 'UTC')::date, event_name, count(*)
FROM events
GROUP BY 1, 2, 3;
