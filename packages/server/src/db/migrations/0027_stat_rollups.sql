-- Statistics rollups (issue 32, docs/decisions/stats.md): beside the 15-minute rows, hourly and
-- daily (UTC) rows (`grain`, in minutes: 15, 60, 1440), and per bucket an all-names row of
-- `stat_buckets` (event_name ''), so a read takes whole days and hours and an unfiltered one merges
-- no per-name sketches. Sketches change form: sparse entries of 5 bytes (32-bit hash and rank,
-- features/stats/sketch.ts), exact for small counts; the 3-byte entries of 0017 are rebuilt from the
-- events below (counts are kept as they are: retention may have expired their events).
ALTER TABLE "stat_buckets" ADD COLUMN "grain" smallint DEFAULT 15 NOT NULL;
--> statement-breakpoint
ALTER TABLE "stat_buckets" DROP CONSTRAINT "stat_buckets_pkey";
--> statement-breakpoint
ALTER TABLE "stat_buckets" ADD CONSTRAINT "stat_buckets_pkey" PRIMARY KEY("merchant_id","grain","bucket","event_name");
--> statement-breakpoint
ALTER TABLE "stat_revenue" ADD COLUMN "grain" smallint DEFAULT 15 NOT NULL;
--> statement-breakpoint
ALTER TABLE "stat_revenue" DROP CONSTRAINT "stat_revenue_pkey";
--> statement-breakpoint
ALTER TABLE "stat_revenue" ADD CONSTRAINT "stat_revenue_pkey" PRIMARY KEY("merchant_id","grain","bucket","currency");
--> statement-breakpoint
ALTER TABLE "stat_dimensions" ADD COLUMN "grain" smallint DEFAULT 15 NOT NULL;
--> statement-breakpoint
ALTER TABLE "stat_dimensions" DROP CONSTRAINT "stat_dimensions_pkey";
--> statement-breakpoint
ALTER TABLE "stat_dimensions" ADD CONSTRAINT "stat_dimensions_pkey" PRIMARY KEY("merchant_id","dimension","grain","bucket","value");
--> statement-breakpoint
-- Sets the sparse entries of `s` into the dense `d` (register-wise max). Only the registers that
-- grow are set, found in one SQL statement (a loop over every entry in PL/pgSQL cost ~5 µs an
-- entry); each set_byte copies the 16 KB, so few calls matter. A stored sketch comes compressed:
-- it is decompressed once here (`|| ''`), not by every get_byte (that cost 70 ms a call).
CREATE OR REPLACE FUNCTION stats_hll_set(d bytea, s bytea) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  ia int[];
  ra int[];
BEGIN
  d := d || ''::bytea;
  s := s || ''::bytea;
  SELECT array_agg(i), array_agg(r) INTO ia, ra
  FROM (
    SELECT get_byte(s, k * 5) * 64 + (get_byte(s, k * 5 + 1) >> 2) AS i, max(get_byte(s, k * 5 + 4)) AS r
    FROM generate_series(0, length(s) / 5 - 1) k GROUP BY 1
  ) x
  WHERE r > get_byte(d, i);
  FOR j IN 1..coalesce(array_length(ia, 1), 0) LOOP
    d := set_byte(d, ia[j], ra[j]);
  END LOOP;
  RETURN d;
END
$$;
--> statement-breakpoint
-- A sparse sketch longer than 3276 entries (just under the dense 16384 bytes): its repeats dropped,
-- and dense if still longer. Anything else as it is.
CREATE OR REPLACE FUNCTION stats_hll_compact(s bytea) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  d bytea;
  n int;
BEGIN
  IF s IS NULL OR length(s) <= 16380 OR length(s) = 16384 THEN RETURN s; END IF;
  s := s || ''::bytea;
  SELECT count(*), string_agg(e, ''::bytea) INTO n, d
  FROM (SELECT DISTINCT substring(s FROM k * 5 + 1 FOR 5) AS e FROM generate_series(0, length(s) / 5 - 1) k) x;
  IF n <= 3276 THEN RETURN d; END IF;
  RETURN stats_hll_set(decode(repeat('00', 16384), 'hex'), d);
END
$$;
--> statement-breakpoint
-- The union of two stored sketches: sparse ones appended (then compacted), sparse entries set into a
-- dense one, two dense ones register by register.
CREATE OR REPLACE FUNCTION stats_hll_merge(a bytea, b bytea) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  d bytea;
BEGIN
  IF a IS NULL OR length(a) = 0 THEN RETURN stats_hll_compact(b); END IF;
  IF b IS NULL OR length(b) = 0 THEN RETURN stats_hll_compact(a); END IF;
  IF length(a) <> 16384 AND length(b) <> 16384 THEN RETURN stats_hll_compact(a || b); END IF;
  IF length(a) = 16384 AND length(b) = 16384 THEN
    a := a || ''::bytea;
    b := b || ''::bytea;
    SELECT decode(string_agg(lpad(to_hex(greatest(get_byte(a, g), get_byte(b, g))), 2, '0'), '' ORDER BY g), 'hex') INTO d
    FROM generate_series(0, 16383) g;
    RETURN d;
  END IF;
  IF length(a) = 16384 THEN RETURN stats_hll_set(a, b); END IF;
  RETURN stats_hll_set(b, a);
END
$$;
--> statement-breakpoint
-- The union of a column of sketches (recount.ts rebuilds hours and days from 15-minute rows).
CREATE OR REPLACE AGGREGATE stats_hll_union(bytea) (SFUNC = stats_hll_merge, STYPE = bytea, INITCOND = '');
--> statement-breakpoint
-- Every stored event's sparse entry, by the rules of features/stats/fold.ts (FACT_COLUMNS).
CREATE TEMPORARY TABLE "stat_event_entries" ON COMMIT DROP AS
SELECT
	"merchant_id",
	date_bin('15 minutes', "event_time", timestamptz '1970-01-01 00:00:00+00') AS "bucket",
	"event_name" COLLATE "C" AS "event_name",
	decode(substr(md5("muid"), 1, 8) || lpad(to_hex(coalesce(nullif(position('1' in (('x' || substr(md5("muid"), 9, 8))::bit(32))::text), 0), 33)), 2, '0'), 'hex') AS "entry",
	CASE WHEN "event_name" = 'PageView' THEN "raw_data"::jsonb END AS "d"
FROM "events";
--> statement-breakpoint
-- Sketches per level, bucket and name ('' all names) of the stored events.
CREATE TEMPORARY TABLE "stat_sketches" ON COMMIT DROP AS
SELECT "merchant_id", "grain", "bucket", "event_name", stats_hll_compact(string_agg("entry", ''::bytea)) AS "visitors"
FROM (
	SELECT DISTINCT f."merchant_id", g."grain", date_bin(make_interval(mins => g."grain"), f."bucket", timestamptz '1970-01-01 00:00:00+00') AS "bucket", n."name" AS "event_name", f."entry"
	FROM "stat_event_entries" f
	CROSS JOIN (VALUES (15), (60), (1440)) g("grain")
	CROSS JOIN LATERAL (VALUES (f."event_name"), (''::text COLLATE "C")) n("name")
) x
GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
-- The 15-minute rows' sketches in the new form (emptied ones, of expired buckets, stay empty).
UPDATE "stat_buckets" t SET "visitors" = coalesce(s."visitors", ''::bytea)
FROM "stat_buckets" k
LEFT JOIN "stat_sketches" s ON s."merchant_id" = k."merchant_id" AND s."grain" = 15 AND s."bucket" = k."bucket" AND s."event_name" = k."event_name"
WHERE t."merchant_id" = k."merchant_id" AND t."grain" = k."grain" AND t."bucket" = k."bucket" AND t."event_name" = k."event_name"
	AND length(k."visitors") > 0;
--> statement-breakpoint
-- All-names 15-minute rows, hourly and daily rows: counts summed from the 15-minute rows.
INSERT INTO "stat_buckets" ("merchant_id", "grain", "bucket", "event_name", "events", "visitors")
SELECT c."merchant_id", c."grain", c."bucket", c."event_name", c."events", coalesce(s."visitors", ''::bytea)
FROM (
	SELECT b."merchant_id", g."grain", date_bin(make_interval(mins => g."grain"), b."bucket", timestamptz '1970-01-01 00:00:00+00') AS "bucket", n."name" AS "event_name", sum(b."events") AS "events"
	FROM "stat_buckets" b
	CROSS JOIN (VALUES (15), (60), (1440)) g("grain")
	CROSS JOIN LATERAL (VALUES (b."event_name"), ('')) n("name")
	WHERE b."grain" = 15 AND (g."grain" > 15 OR n."name" = '')
	GROUP BY 1, 2, 3, 4
) c
LEFT JOIN "stat_sketches" s ON s."merchant_id" = c."merchant_id" AND s."grain" = c."grain" AND s."bucket" = c."bucket" AND s."event_name" = c."event_name";
--> statement-breakpoint
INSERT INTO "stat_revenue" ("merchant_id", "grain", "bucket", "currency", "purchases", "amount")
SELECT r."merchant_id", g."grain", date_bin(make_interval(mins => g."grain"), r."bucket", timestamptz '1970-01-01 00:00:00+00'), r."currency", sum(r."purchases"), sum(r."amount")
FROM "stat_revenue" r
CROSS JOIN (VALUES (60), (1440)) g("grain")
WHERE r."grain" = 15
GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
-- Dimension sketches per level and value, by the fold's rules (dimensions of PageView data).
CREATE TEMPORARY TABLE "stat_dimension_sketches" ON COMMIT DROP AS
SELECT "merchant_id", "dimension", "grain", "bucket", "value", stats_hll_compact(string_agg("entry", ''::bytea)) AS "visitors"
FROM (
	SELECT DISTINCT f."merchant_id", v."dimension", g."grain", date_bin(make_interval(mins => g."grain"), f."bucket", timestamptz '1970-01-01 00:00:00+00') AS "bucket",
		coalesce(nullif(left(v."value", 200), ''), '(none)') AS "value", f."entry"
	FROM "stat_event_entries" f
	CROSS JOIN (VALUES (15), (60), (1440)) g("grain")
	CROSS JOIN LATERAL (SELECT CASE WHEN jsonb_typeof(f."d"->'url') = 'string' THEN f."d"->>'url' END AS "url") u
	CROSS JOIN LATERAL (VALUES
		('path', CASE WHEN jsonb_typeof(f."d"->'path') = 'string' THEN f."d"->>'path' END),
		('referrer', CASE WHEN jsonb_typeof(f."d"->'referrer') = 'string'
			THEN lower(substring(f."d"->>'referrer' from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)')) END),
		('utm_source', CASE WHEN u."url" LIKE '%utm_source=%' THEN replace(substring(u."url" from '[?&]utm_source=([^&#]*)'), '+', ' ') END),
		('utm_medium', CASE WHEN u."url" LIKE '%utm_medium=%' THEN replace(substring(u."url" from '[?&]utm_medium=([^&#]*)'), '+', ' ') END),
		('utm_campaign', CASE WHEN u."url" LIKE '%utm_campaign=%' THEN replace(substring(u."url" from '[?&]utm_campaign=([^&#]*)'), '+', ' ') END)
	) AS v("dimension", "value")
	WHERE f."event_name" = 'PageView' AND jsonb_typeof(f."d") = 'object'
) x
GROUP BY 1, 2, 3, 4, 5;
--> statement-breakpoint
UPDATE "stat_dimensions" t SET "visitors" = coalesce(s."visitors", ''::bytea)
FROM "stat_dimensions" k
LEFT JOIN "stat_dimension_sketches" s ON s."merchant_id" = k."merchant_id" AND s."dimension" = k."dimension" AND s."grain" = 15 AND s."bucket" = k."bucket" AND s."value" = k."value"
WHERE t."merchant_id" = k."merchant_id" AND t."dimension" = k."dimension" AND t."grain" = k."grain" AND t."bucket" = k."bucket" AND t."value" = k."value";
--> statement-breakpoint
INSERT INTO "stat_dimensions" ("merchant_id", "dimension", "grain", "bucket", "value", "events", "visitors")
SELECT c."merchant_id", c."dimension", c."grain", c."bucket", c."value", c."events", coalesce(s."visitors", ''::bytea)
FROM (
	SELECT d."merchant_id", d."dimension", g."grain", date_bin(make_interval(mins => g."grain"), d."bucket", timestamptz '1970-01-01 00:00:00+00') AS "bucket", d."value", sum(d."events") AS "events"
	FROM "stat_dimensions" d
	CROSS JOIN (VALUES (60), (1440)) g("grain")
	WHERE d."grain" = 15
	GROUP BY 1, 2, 3, 4, 5
) c
LEFT JOIN "stat_dimension_sketches" s ON s."merchant_id" = c."merchant_id" AND s."dimension" = c."dimension" AND s."grain" = c."grain" AND s."bucket" = c."bucket" AND s."value" = c."value";
