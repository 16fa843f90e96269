-- MAX_MERCHANTS_PER_PARTNER (docs/decisions.md, "Security round 2: fairness between partners"):
-- a count per partner kept by the merchant create itself, so the cap costs one row whatever the
-- partner's size (counting the partner's merchants at each create grew with them).
CREATE TABLE "partner_usage" (
	"partner_id" uuid PRIMARY KEY NOT NULL,
	"merchants" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "partner_usage" ADD CONSTRAINT "partner_usage_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
INSERT INTO "partner_usage" ("partner_id", "merchants") SELECT "partner_id", count(*) FROM "merchants" GROUP BY "partner_id";
