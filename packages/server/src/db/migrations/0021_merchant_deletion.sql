-- Merchant and tag deletion (docs/decisions/data-deletion.md; custom migration: partial indexes and a trigger).
--
-- A deleted merchant keeps its row as a tombstone (`deleted_at`) until the background purge
-- (jobs/merchant-purge.ts) has removed its rows in batches; every reader filters on `deleted_at IS NULL`.
-- `purge_claimed_until` is the purge's lease: one process purges a merchant at a time.
ALTER TABLE "merchants" ADD COLUMN "deleted_at" timestamp (3) with time zone;
--> statement-breakpoint
ALTER TABLE "merchants" ADD COLUMN "purge_claimed_until" timestamp (3) with time zone;
--> statement-breakpoint
DROP INDEX "merchants_partner_created_idx";
--> statement-breakpoint
CREATE INDEX "merchants_partner_created_idx" ON "merchants" USING btree ("partner_id","created_at","id") WHERE "deleted_at" IS NULL;
--> statement-breakpoint
CREATE INDEX "merchants_deleted_idx" ON "merchants" USING btree ("deleted_at") WHERE "deleted_at" IS NOT NULL;
--> statement-breakpoint
-- A deleted tag (its own DELETE, or its merchant's) notifies `partner_tags_deleted` with its id at
-- commit: every process drops it from its caches of live tags and collector tags at once
-- (runtime/collector/deleted-tags.ts). Its host leaves the in-memory set by migration 0012's trigger.
CREATE FUNCTION partner_tags_deleted_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('partner_tags_deleted', OLD.id::text);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER tags_deleted_notify AFTER DELETE ON tags
  FOR EACH ROW EXECUTE FUNCTION partner_tags_deleted_notify();
