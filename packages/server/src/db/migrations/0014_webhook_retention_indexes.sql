-- Webhook retention (services/webhooks/retention.ts) reads the oldest messages first, and finds a
-- message's deliveries by message_id: retention's own delete, its "no delivery left" check, and the
-- ON DELETE CASCADE from webhook_messages. The unique (endpoint_id, message_id) index serves neither.
CREATE INDEX IF NOT EXISTS "webhook_messages_created_idx" ON "webhook_messages" USING btree ("created_at");
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "webhook_deliveries_message_idx" ON "webhook_deliveries" USING btree ("message_id");
