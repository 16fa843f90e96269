-- The visitor's client as the request that brought an event told it (country, device class,
-- browser, system; features/stats/stored-event.ts), kept so that a resend to the statistics
-- carries it too. Never the address. Null: unknown (events stored before, or sent without one).
ALTER TABLE "events" ADD COLUMN IF NOT EXISTS "client" text;
