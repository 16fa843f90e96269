-- Statistics of one merchant (issue 32; docs/decisions/stats.md): aggregates kept by storeEvents in
-- the statement that inserts the events, per 15-minute UTC bucket (every zone's local midnight,
-- half-hour and 45-minute offsets included, falls on a bucket edge). `visitors` is a HyperLogLog
-- sketch of the muids (features/stats/sketch.ts: dense 16384 bytes, or sparse 3-byte entries).
CREATE TABLE "stat_buckets" (
	"merchant_id" uuid NOT NULL,
	"bucket" timestamp with time zone NOT NULL,
	"event_name" text NOT NULL,
	"events" bigint NOT NULL,
	"visitors" bytea NOT NULL,
	CONSTRAINT "stat_buckets_pkey" PRIMARY KEY("merchant_id","bucket","event_name")
);
--> statement-breakpoint
CREATE TABLE "stat_revenue" (
	"merchant_id" uuid NOT NULL,
	"bucket" timestamp with time zone NOT NULL,
	"currency" text NOT NULL,
	"purchases" bigint NOT NULL,
	"amount" numeric NOT NULL,
	CONSTRAINT "stat_revenue_pkey" PRIMARY KEY("merchant_id","bucket","currency")
);
--> statement-breakpoint
CREATE TABLE "stat_dimensions" (
	"merchant_id" uuid NOT NULL,
	"dimension" text NOT NULL,
	"bucket" timestamp with time zone NOT NULL,
	"value" text NOT NULL,
	"events" bigint NOT NULL,
	"visitors" bytea NOT NULL,
	CONSTRAINT "stat_dimensions_pkey" PRIMARY KEY("merchant_id","dimension","bucket","value")
);
--> statement-breakpoint
-- The union of two stored sketches: small sparse ones are appended (the reader keeps the larger
-- rank of a repeated register); past 6144 bytes the result is dense, 16384 registers.
CREATE OR REPLACE FUNCTION stats_hll_merge(a bytea, b bytea) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  d bytea;
  s bytea;
  n int;
  i int;
  r int;
  at int := 0;
BEGIN
  IF a IS NULL OR length(a) = 0 THEN RETURN b; END IF;
  IF b IS NULL OR length(b) = 0 THEN RETURN a; END IF;
  IF length(a) <> 16384 AND length(b) <> 16384 AND length(a) + length(b) <= 6144 THEN RETURN a || b; END IF;
  IF length(a) = 16384 THEN
    d := a; s := b;
  ELSIF length(b) = 16384 THEN
    d := b; s := a;
  ELSE
    d := decode(repeat('00', 16384), 'hex'); s := a || b;
  END IF;
  n := length(s);
  IF n = 16384 THEN
    FOR i IN 0..16383 LOOP
      r := get_byte(s, i);
      IF r > get_byte(d, i) THEN d := set_byte(d, i, r); END IF;
    END LOOP;
  ELSE
    WHILE at + 2 < n LOOP
      i := get_byte(s, at) * 256 + get_byte(s, at + 1);
      r := get_byte(s, at + 2);
      IF r > get_byte(d, i) THEN d := set_byte(d, i, r); END IF;
      at := at + 3;
    END LOOP;
  END IF;
  RETURN d;
END
$$;
--> statement-breakpoint
-- The events stored before this migration, by the rules of features/stats/event-facts.ts (utm
-- values are taken as sent, without percent-decoding). Registers as sketch.ts makes them from md5.
CREATE TEMPORARY TABLE "stat_facts" ON COMMIT DROP AS
SELECT
	"merchant_id",
	date_bin('15 minutes', "event_time", timestamptz '1970-01-01 00:00:00+00') AS "bucket",
	"event_name",
	(((('x' || substr(md5("muid"), 1, 8))::bit(32)::int) >> 18) & 16383) AS "idx",
	coalesce(nullif(position('1' in (('x' || substr(md5("muid"), 9, 8))::bit(32))::text), 0), 33) AS "rank",
	CASE WHEN "event_name" IN ('PageView', 'Purchase') THEN "raw_data"::jsonb END AS "d"
FROM "events";
--> statement-breakpoint
INSERT INTO "stat_buckets" ("merchant_id", "bucket", "event_name", "events", "visitors")
SELECT "merchant_id", "bucket", "event_name", sum("n"), string_agg(decode(lpad(to_hex("idx" * 256 + "rank"), 6, '0'), 'hex'), ''::bytea)
FROM (
	SELECT "merchant_id", "bucket", "event_name", "idx", max("rank") AS "rank", count(*) AS "n"
	FROM "stat_facts" GROUP BY 1, 2, 3, 4
) r
GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO "stat_revenue" ("merchant_id", "bucket", "currency", "purchases", "amount")
SELECT "merchant_id", "bucket", upper("d"->>'currency'), count(*), sum(("d"->>'value')::numeric)
FROM "stat_facts"
WHERE "event_name" = 'Purchase' AND jsonb_typeof("d") = 'object'
	AND jsonb_typeof("d"->'currency') = 'string' AND "d"->>'currency' ~ '^[A-Za-z]{3}$'
	AND (jsonb_typeof("d"->'value') = 'number'
		OR (jsonb_typeof("d"->'value') = 'string' AND "d"->>'value' ~ '^-?[0-9]{1,30}(\.[0-9]{1,30})?$'))
GROUP BY 1, 2, 3;
--> statement-breakpoint
INSERT INTO "stat_dimensions" ("merchant_id", "dimension", "bucket", "value", "events", "visitors")
SELECT "merchant_id", "dimension", "bucket", "value", sum("n"), string_agg(decode(lpad(to_hex("idx" * 256 + "rank"), 6, '0'), 'hex'), ''::bytea)
FROM (
	SELECT f."merchant_id", v."dimension", f."bucket", coalesce(nullif(left(v."value", 200), ''), '(none)') AS "value", f."idx", max(f."rank") AS "rank", count(*) AS "n"
	FROM "stat_facts" f
	CROSS JOIN LATERAL (VALUES
		('path', CASE WHEN jsonb_typeof(f."d"->'path') = 'string' THEN f."d"->>'path' END),
		('referrer', CASE WHEN jsonb_typeof(f."d"->'referrer') = 'string'
			THEN lower(substring(f."d"->>'referrer' from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)')) END),
		('utm_source', CASE WHEN jsonb_typeof(f."d"->'url') = 'string' THEN replace(substring(f."d"->>'url' from '[?&]utm_source=([^&#]*)'), '+', ' ') END),
		('utm_medium', CASE WHEN jsonb_typeof(f."d"->'url') = 'string' THEN replace(substring(f."d"->>'url' from '[?&]utm_medium=([^&#]*)'), '+', ' ') END),
		('utm_campaign', CASE WHEN jsonb_typeof(f."d"->'url') = 'string' THEN replace(substring(f."d"->>'url' from '[?&]utm_campaign=([^&#]*)'), '+', ' ') END)
	) AS v("dimension", "value")
	WHERE f."event_name" = 'PageView' AND jsonb_typeof(f."d") = 'object'
	GROUP BY 1, 2, 3, 4, 5
) r
GROUP BY 1, 2, 3, 4;
