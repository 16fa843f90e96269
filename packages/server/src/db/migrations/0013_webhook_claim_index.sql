-- The delivery claim (services/webhooks/delivery-queue.ts) reads a few rows per endpoint with
-- pending deliveries, in due order, instead of every due row: it walks the distinct endpoint ids
-- of pending deliveries and reads each endpoint's oldest due rows on this index. The index on
-- next_attempt_at alone served only the old claim (which numbered every due row per endpoint).
CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries" USING btree ("endpoint_id","next_attempt_at","id") WHERE "status" = 'pending';
--> statement-breakpoint
DROP INDEX "webhook_deliveries_due_idx";
