-- Per-merchant ordering of events, with no lock, counter or statement shared by all merchants
-- (custom migration; drizzle-kit cannot express triggers).
--
-- Before: `events.seq` came from one identity sequence and every inserting statement took one
-- advisory lock (0001), so event writes of all merchants committed one after another.
-- After: `seq` counts per merchant. `event_seqs` holds each merchant's last seq; an inserting
-- statement bumps the rows of the merchants it writes (ON CONFLICT DO UPDATE, in merchant order),
-- and that row lock, held until commit, orders the commits of ONE merchant only: a higher seq of
-- a merchant is never visible before a lower one, writers of different merchants never wait.
--
-- Existing ids carry over: each merchant's counter starts at the highest seq it already has, so
-- a client resuming with an id from the global sequence (`seq > last`, per merchant) misses
-- nothing and sees nothing twice.
CREATE TABLE "event_seqs" (
	"merchant_id" uuid PRIMARY KEY NOT NULL,
	"last_seq" bigint NOT NULL
);
--> statement-breakpoint
INSERT INTO event_seqs (merchant_id, last_seq)
SELECT merchant_id, max(seq) FROM events GROUP BY merchant_id;
--> statement-breakpoint
DROP TRIGGER IF EXISTS events_order_lock ON events;
--> statement-breakpoint
DROP FUNCTION IF EXISTS partner_events_order_lock();
--> statement-breakpoint
ALTER TABLE events ALTER COLUMN seq DROP IDENTITY IF EXISTS;
--> statement-breakpoint
-- The ingestion statement (services/events/store-events.ts) sets seq itself, one bump per merchant
-- per statement. Any other insert (a backfill, psql, a test) leaves seq out: this row trigger
-- (run only for those rows, thanks to WHEN) takes the next value of the row's merchant.
CREATE OR REPLACE FUNCTION events_assign_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_seqs AS s (merchant_id, last_seq) VALUES (NEW.merchant_id, 1)
  ON CONFLICT (merchant_id) DO UPDATE SET last_seq = s.last_seq + 1
  RETURNING last_seq INTO NEW.seq;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_assign_seq BEFORE INSERT ON events
  FOR EACH ROW WHEN (NEW.seq IS NULL) EXECUTE FUNCTION events_assign_seq();
