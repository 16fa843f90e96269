CREATE TYPE "public"."domain_type" AS ENUM('preverified', 'custom');--> statement-breakpoint
CREATE TYPE "public"."tag_status" AS ENUM('active', 'inactive', 'waiting_for_events');--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "events" (
	"merchant_id" uuid NOT NULL,
	"id" text NOT NULL,
	"tag_id" uuid NOT NULL,
	"muid" text NOT NULL,
	"event_name" text NOT NULL,
	"event_time" timestamp (3) with time zone NOT NULL,
	"raw_data" text NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	CONSTRAINT "events_pkey" PRIMARY KEY("merchant_id","id")
);
--> statement-breakpoint
CREATE TABLE "merchants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"partner_id" uuid NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"domain" text NOT NULL,
	"record_name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tags" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"merchant_id" uuid NOT NULL,
	"domain" text NOT NULL,
	"domain_type" "domain_type" NOT NULL,
	"record_name" text NOT NULL,
	"status" "tag_status" NOT NULL,
	"is_connected" boolean DEFAULT false NOT NULL,
	"is_verified" boolean DEFAULT false NOT NULL,
	"verified_at" timestamp (3) with time zone,
	"first_event_at" timestamp (3) with time zone,
	"last_event_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "merchants" ADD CONSTRAINT "merchants_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tags" ADD CONSTRAINT "tags_merchant_id_merchants_id_fk" FOREIGN KEY ("merchant_id") REFERENCES "public"."merchants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_partner_id_idx" ON "api_keys" USING btree ("partner_id");--> statement-breakpoint
CREATE INDEX "events_merchant_time_idx" ON "events" USING btree ("merchant_id","event_time","id");--> statement-breakpoint
CREATE INDEX "events_merchant_name_time_idx" ON "events" USING btree ("merchant_id","event_name","event_time","id");--> statement-breakpoint
CREATE INDEX "events_merchant_seq_idx" ON "events" USING btree ("merchant_id","seq");--> statement-breakpoint
CREATE INDEX "merchants_partner_created_idx" ON "merchants" USING btree ("partner_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "partners_domain_key" ON "partners" USING btree ("domain");--> statement-breakpoint
CREATE UNIQUE INDEX "tags_merchant_domain_type_key" ON "tags" USING btree ("merchant_id","domain_type");--> statement-breakpoint
CREATE INDEX "tags_domain_idx" ON "tags" USING btree ("domain");