-- Event retention (docs/decisions/data-deletion.md, "Retention"; custom migration: a partial index).
--
-- A merchant's own period (`retention_days`, null = inherit), the partner's default in its own table
-- (`partner_settings.default_retention_days`, null = the server's EVENT_RETENTION_DAYS; not on
-- `partners`, whose every update drops the key caches) and when the partner last changed it
-- (`retention_updated_at`: every merchant of the partner is due again at once).
-- `retention_claimed_until` is the retention job's lease (one process works a merchant at a time),
-- `retention_checked_at` when its last pass started (the pass removed events older than it minus the period).
ALTER TABLE "merchants" ADD COLUMN "retention_days" integer;
--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "retention_claimed_until" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "retention_checked_at" timestamp (3) with time zone;
--> statement-breakpoint
CREATE TABLE "partner_settings" (
	"partner_id" uuid PRIMARY KEY NOT NULL,
	"default_retention_days" integer,
	"retention_updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "partner_settings_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action
);
--> statement-breakpoint
-- The job's claim: live merchants, the longest unchecked first.
CREATE INDEX "merchants_retention_due_idx" ON "merchants" USING btree ("retention_checked_at") WHERE "deleted_at" IS NULL;
