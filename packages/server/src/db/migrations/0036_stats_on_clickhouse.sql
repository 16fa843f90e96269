-- The statistics move to ClickHouse (features/stats/, db/clickhouse/): the aggregates, their fold
-- queue, the erasures' recount list, the kept counts and their functions go. What stays here is the
-- outbox of events stored but not yet sent there, written by the statement that stores them.
DROP TABLE IF EXISTS "stat_point_visitors";
--> statement-breakpoint
DROP TABLE IF EXISTS "stat_dimensions";
--> statement-breakpoint
DROP TABLE IF EXISTS "stat_revenue";
--> statement-breakpoint
DROP TABLE IF EXISTS "stat_buckets";
--> statement-breakpoint
DROP TABLE IF EXISTS "stat_pending";
--> statement-breakpoint
DROP TABLE IF EXISTS "erasure_buckets";
--> statement-breakpoint
DROP AGGREGATE IF EXISTS stats_hll_union(bytea);
--> statement-breakpoint
DROP FUNCTION IF EXISTS stats_hll_compact(bytea);
--> statement-breakpoint
DROP FUNCTION IF EXISTS stats_hll_merge(bytea, bytea);
--> statement-breakpoint
DROP FUNCTION IF EXISTS stats_hll_set(bytea, bytea);
--> statement-breakpoint
CREATE TABLE "stats_outbox" (
	"merchant_id" uuid NOT NULL,
	"first_seq" bigint NOT NULL,
	"last_seq" bigint NOT NULL,
	"claimed_until" timestamp (3) with time zone DEFAULT now() + interval '30 seconds' NOT NULL,
	CONSTRAINT "stats_outbox_pkey" PRIMARY KEY("merchant_id","first_seq")
);
--> statement-breakpoint
CREATE INDEX "stats_outbox_claimed_idx" ON "stats_outbox" USING btree ("claimed_until");
