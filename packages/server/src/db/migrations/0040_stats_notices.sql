-- Digests and spikes as webhooks (issue 53; docs/decisions/digests.md).
--
-- A merchant's IANA time zone (canonical name; its weekly digest goes out Monday 06:00 there), the
-- partner's switches (`stats_digest`, `stats_spike` with its multiple) and the notices sent: one row
-- per merchant, kind and period, inserted in the transaction of the webhook's outbox row, so a digest
-- or spike goes out once even across restarts and processes (the key refuses a second).
ALTER TABLE "merchants" ADD COLUMN "timezone" text DEFAULT 'UTC' NOT NULL;
--> statement-breakpoint
ALTER TABLE "partner_settings" ADD COLUMN "stats_digest" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
ALTER TABLE "partner_settings" ADD COLUMN "stats_spike" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
ALTER TABLE "partner_settings" ADD COLUMN "stats_spike_multiple" double precision DEFAULT 3 NOT NULL;
--> statement-breakpoint
CREATE TABLE "stats_notices" (
	"merchant_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"period" text NOT NULL,
	"message_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "stats_notices_pkey" PRIMARY KEY ("merchant_id", "kind", "period"),
	CONSTRAINT "stats_notices_kind" CHECK ("kind" in ('digest', 'spike')),
	CONSTRAINT "stats_notices_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE cascade ON UPDATE no action
);
--> statement-breakpoint
-- Old notices are deleted oldest first (only the current week's and day's are ever looked up).
CREATE INDEX "stats_notices_created_idx" ON "stats_notices" USING btree ("created_at");
