-- Tag monitor and per-tag CNAME targets (issue 14 items 1-3, issue 18 finding 7).
--
-- target_label: a custom tag's own CNAME target is `<target_label>.<TAG_TARGET_HOST>`, so a wildcard
-- record pointing at one tag's target cannot verify another partner's tag. NULL for tags made before
-- this migration (and preverified ones): their CNAME keeps pointing at TAG_TARGET_HOST itself.
ALTER TABLE "tags" ADD COLUMN "target_label" text;
--> statement-breakpoint
CREATE UNIQUE INDEX "tags_target_label_key" ON "tags" ("target_label");
--> statement-breakpoint
-- When the monitor checks the tag next (NULL: not scheduled). Claimed by one process at a time:
-- check_lease_until marks a claim in progress (a crashed claim expires and is taken again).
ALTER TABLE "tags" ADD COLUMN "next_check_at" timestamp(3) with time zone;
--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "check_lease" uuid;
--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "check_lease_until" timestamp(3) with time zone;
--> statement-breakpoint
-- Unverified tags: position in TAG_RECHECK_SCHEDULE and the end of the re-check window.
ALTER TABLE "tags" ADD COLUMN "recheck_attempt" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "recheck_until" timestamp(3) with time zone;
--> statement-breakpoint
-- The last DNS check: { checkedAt, ok, reason?, found }.
ALTER TABLE "tags" ADD COLUMN "last_check" jsonb;
--> statement-breakpoint
CREATE INDEX "tags_next_check_at_idx" ON "tags" ("next_check_at") WHERE "next_check_at" IS NOT NULL;
--> statement-breakpoint
-- Existing custom tags join the monitor: verified ones get a health check, unverified ones made in the
-- last 7 days resume re-checks until 7 days after their creation.
UPDATE "tags" SET "next_check_at" = now() WHERE "domain_type" = 'custom' AND "is_verified";
--> statement-breakpoint
UPDATE "tags" SET "next_check_at" = now(), "recheck_until" = "created_at" + interval '7 days'
  WHERE "domain_type" = 'custom' AND NOT "is_verified" AND "created_at" > now() - interval '7 days';
