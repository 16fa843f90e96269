-- Real-time event stream (custom migration; drizzle-kit cannot express triggers).
--
-- 1. Commit order = seq order. A statement inserting into events first takes a transaction-level
--    advisory lock, held until commit, so event-inserting transactions commit one after the other
--    and a higher seq is never visible before a lower one. Readers resume with `seq > last id`
--    and can never skip a row that commits late. (NOTIFY already serialises the commits of
--    notifying transactions; this also covers the insert itself.)
CREATE OR REPLACE FUNCTION partner_events_order_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7316402012);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_order_lock BEFORE INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION partner_events_order_lock();
--> statement-breakpoint
-- 2. One notification per statement (not per row) on channel `partner_events`, delivered at commit:
--    `merchant_id:max_seq` entries joined by commas, at most 100 per payload (about 4.8 KB, under
--    the 8000-byte NOTIFY limit); more merchants in one statement send several payloads.
CREATE OR REPLACE FUNCTION partner_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  chunk text;
BEGIN
  FOR chunk IN
    SELECT string_agg(m.merchant_id::text || ':' || m.max_seq::text, ',')
    FROM (
      SELECT merchant_id, max(seq) AS max_seq, (row_number() OVER (ORDER BY merchant_id) - 1) / 100 AS grp
      FROM inserted
      GROUP BY merchant_id
    ) m
    GROUP BY m.grp
  LOOP
    PERFORM pg_notify('partner_events', chunk);
  END LOOP;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER events_notify AFTER INSERT ON events
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION partner_events_notify();
