-- Merchant sessions (issue 33): tokens a browser may hold for one merchant, hashed like API keys.
-- No trigger of their own: a session's validity follows its key (key_id), whose changes already
-- notify `partner_api_keys` (migration 0005) and empty every process's cache, sessions included.
CREATE TABLE "merchant_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"merchant_id" uuid NOT NULL,
	"key_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"allowed_origins" text[] NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "merchant_sessions" ADD CONSTRAINT "merchant_sessions_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "merchant_sessions" ADD CONSTRAINT "merchant_sessions_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "merchant_sessions" ADD CONSTRAINT "merchant_sessions_key_id_api_keys_id_fk" FOREIGN KEY ("key_id") REFERENCES "public"."api_keys"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_sessions_token_hash_key" ON "merchant_sessions" USING btree ("token_hash");
--> statement-breakpoint
CREATE INDEX "merchant_sessions_partner_expires_idx" ON "merchant_sessions" USING btree ("partner_id","expires_at");
--> statement-breakpoint
CREATE INDEX "merchant_sessions_merchant_id_idx" ON "merchant_sessions" USING btree ("merchant_id");
--> statement-breakpoint
CREATE INDEX "merchant_sessions_key_id_idx" ON "merchant_sessions" USING btree ("key_id");
