-- Consent in the tag (issue 34; docs/decisions/consent.md). Per tag: the consent mode the tag script
-- and the collector apply, whether Global Privacy Control counts as a denial, and whether events
-- without consent are still collected cookieless (a daily-rotating hash instead of the muid cookie).
-- Existing tags keep today's behaviour ('none', no cookieless).
CREATE TYPE "public"."tag_consent_mode" AS ENUM('none', 'opt-in', 'opt-out');
--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "consent_mode" "tag_consent_mode" DEFAULT 'none' NOT NULL;
--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "respect_gpc" boolean DEFAULT true NOT NULL;
--> statement-breakpoint
ALTER TABLE "tags" ADD COLUMN "cookieless" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- The consent state each event was collected under. A constant default: PostgreSQL 11+ adds the
-- column without rewriting the table; existing rows read 'not_required' (mode none's meaning).
CREATE TYPE "public"."event_consent" AS ENUM('not_required', 'granted', 'implied', 'cookieless');
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "consent" "event_consent" DEFAULT 'not_required' NOT NULL;
--> statement-breakpoint
-- A tag's consent settings changed: every process's tag caches forget it (the channel of migration
-- 0021, whose listeners re-read a tag they forgot), so the collector applies the new mode at once.
CREATE TRIGGER tags_consent_notify AFTER UPDATE OF consent_mode, respect_gpc, cookieless ON tags
  FOR EACH ROW
  WHEN (OLD.consent_mode IS DISTINCT FROM NEW.consent_mode OR OLD.respect_gpc IS DISTINCT FROM NEW.respect_gpc
    OR OLD.cookieless IS DISTINCT FROM NEW.cookieless)
  EXECUTE FUNCTION partner_tags_deleted_notify();
