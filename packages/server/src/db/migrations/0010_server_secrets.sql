-- Secrets the server makes for itself, shared by every process on the database: the key that signs
-- event-list cursors (services/events/cursor.ts). Made once, by the first process that needs it
-- (INSERT ... ON CONFLICT DO NOTHING), so several instances sign and check the same cursors
-- without configuration; CURSOR_SECRET overrides it.
CREATE TABLE "server_secrets" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
