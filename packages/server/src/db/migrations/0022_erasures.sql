-- Visitor erasure (issue 34; docs/decisions/data-deletion.md, "Visitor erasure"; custom migration).
--
-- An erasure request: one visitor (muid) of one merchant, or of every merchant of the partner
-- (`merchant_id` null). jobs/visitor-erasure.ts claims it (`claimed_until`, a lease), deletes the
-- visitor's events in batches, recounts the statistics' buckets they were in, then sends
-- `erasure.completed`. The row is also the suppression: while `suppressed_until` is null or later
-- than now, `storeEvents` drops events of that muid in its scope (the whole erasure; forever with
-- `suppress`).
CREATE TABLE "erasures" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"merchant_id" uuid,
	"muid" text NOT NULL,
	"suppress" boolean NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"events_deleted" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	"claimed_until" timestamp (3) with time zone,
	"suppressed_until" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "erasures" ADD CONSTRAINT "erasures_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- The insert's suppression probe (one per stored event).
CREATE INDEX "erasures_muid_idx" ON "erasures" USING btree ("muid");
--> statement-breakpoint
-- The job's claim: erasures not completed, oldest first.
CREATE INDEX "erasures_open_idx" ON "erasures" USING btree ("created_at") WHERE "status" <> 'completed';
--> statement-breakpoint
-- The 15-minute statistics buckets (per merchant) the erased events were in: recounted, then removed.
CREATE TABLE "erasure_buckets" (
	"erasure_id" uuid NOT NULL,
	"merchant_id" uuid NOT NULL,
	"bucket" timestamp with time zone NOT NULL,
	CONSTRAINT "erasure_buckets_pkey" PRIMARY KEY("erasure_id","merchant_id","bucket")
);
--> statement-breakpoint
ALTER TABLE "erasure_buckets" ADD CONSTRAINT "erasure_buckets_erasure_id_erasures_id_fk" FOREIGN KEY ("erasure_id") REFERENCES "public"."erasures"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- One visitor's events of a merchant: the erasure's batches and the event list's `muid=` filter
-- (by time, either direction). On a large existing table create it first with CREATE INDEX
-- CONCURRENTLY (same name): IF NOT EXISTS then skips it here.
CREATE INDEX IF NOT EXISTS "events_merchant_muid_time_idx" ON "events" USING btree ("merchant_id","muid","event_time","id");
