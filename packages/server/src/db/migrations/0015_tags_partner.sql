-- Fairness between partners (docs/decisions.md, "Security round 2"): the tag monitor claims due
-- checks partner by partner, and the custom-tag cap counts a partner's custom tags. Both read this
-- index; a tag's partner is its merchant's, copied here so neither walks the partner's merchants.
ALTER TABLE "tags" ADD COLUMN "partner_id" uuid;
--> statement-breakpoint
UPDATE "tags" SET "partner_id" = "merchants"."partner_id" FROM "merchants" WHERE "merchants"."id" = "tags"."merchant_id";
--> statement-breakpoint
ALTER TABLE "tags" ALTER COLUMN "partner_id" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "tags_partner_custom_due_idx" ON "tags" USING btree ("partner_id","next_check_at","id") WHERE "domain_type" = 'custom';
