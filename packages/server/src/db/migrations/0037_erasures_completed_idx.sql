-- The erasures a partner completed lately: a read a replica serves asks the primary for them
-- (features/events/read/list-events.ts, merchantOnPrimary), so that a replica that has not yet
-- replayed an erasure never shows the erased events.
CREATE INDEX IF NOT EXISTS "erasures_completed_idx" ON "erasures" USING btree ("partner_id", "completed_at") WHERE "completed_at" IS NOT NULL;
