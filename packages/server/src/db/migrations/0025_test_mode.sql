-- Test mode (issue 35, docs/decisions/test-mode.md): every live partner has one test-mode twin, a
-- partner row of its own that `mp_test_` keys belong to. Every table is scoped by partner_id, so test
-- data is apart from live data the way two partners' data are. The twin shares the live partner's
-- name, domain and record (its preverified tags live behind the same published CNAME).
ALTER TABLE "partners" ADD COLUMN "livemode" boolean DEFAULT true NOT NULL;
--> statement-breakpoint
ALTER TABLE "partners" ADD COLUMN "live_partner_id" uuid;
--> statement-breakpoint
ALTER TABLE "partners" ADD CONSTRAINT "partners_live_partner_id_partners_id_fk" FOREIGN KEY ("live_partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "partners" ADD CONSTRAINT "partners_twin_shape" CHECK (livemode = (live_partner_id IS NULL));
--> statement-breakpoint
CREATE UNIQUE INDEX "partners_live_partner_id_key" ON "partners" USING btree ("live_partner_id");
--> statement-breakpoint
DROP INDEX "partners_domain_key";
--> statement-breakpoint
CREATE UNIQUE INDEX "partners_domain_key" ON "partners" USING btree ("domain") WHERE "livemode";
--> statement-breakpoint
-- Twins of the partners onboarded before test mode: they get no key here (keys are shown once, at
-- creation); `pnpm partner rotate-key <partnerId> --mode test` issues their first test key.
INSERT INTO "partners" ("name", "domain", "record_name", "livemode", "live_partner_id", "created_at")
SELECT "name", "domain", "record_name", false, "id", "created_at" FROM "partners" WHERE "livemode";
