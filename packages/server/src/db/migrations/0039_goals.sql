-- A merchant's goals (features/goals/): an event name or a page path pattern that counts as a
-- conversion in the statistics. At most 100 per merchant (checked when one is created).
CREATE TABLE IF NOT EXISTS "goals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"merchant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"event_name" text,
	"path_pattern" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "goals_one_kind" CHECK (("goals"."event_name" is null) <> ("goals"."path_pattern" is null))
);
--> statement-breakpoint
ALTER TABLE "goals" ADD CONSTRAINT "goals_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "goals_merchant_idx" ON "goals" USING btree ("merchant_id","created_at","id");
