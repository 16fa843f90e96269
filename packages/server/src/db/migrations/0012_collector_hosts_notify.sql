-- Collector hosts known in memory (custom migration; drizzle-kit cannot express triggers).
--
-- Every server process keeps the set of collector hosts in memory (services/tag/collector-hosts.ts)
-- so a request's Host header is answered without a database query. A new custom tag or a new
-- partner notifies channel `partner_collector_hosts` with its host at commit; a partner whose record
-- or domain changes, or any deleted row, notifies `*` (every process reloads the whole set).
CREATE OR REPLACE FUNCTION partner_collector_hosts_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND TG_TABLE_NAME = 'partners' THEN
    PERFORM pg_notify('partner_collector_hosts', NEW.record_name || '.' || NEW.domain);
  ELSIF TG_OP = 'INSERT' THEN
    IF NEW.domain_type = 'custom' THEN
      PERFORM pg_notify('partner_collector_hosts', NEW.record_name || '.' || NEW.domain);
    END IF;
  ELSE
    PERFORM pg_notify('partner_collector_hosts', '*');
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER tags_collector_hosts_notify AFTER INSERT ON tags
  FOR EACH ROW EXECUTE FUNCTION partner_collector_hosts_notify();
--> statement-breakpoint
CREATE TRIGGER tags_collector_hosts_notify_change AFTER UPDATE OF record_name, domain, domain_type OR DELETE ON tags
  FOR EACH ROW EXECUTE FUNCTION partner_collector_hosts_notify();
--> statement-breakpoint
CREATE TRIGGER partners_collector_hosts_notify AFTER INSERT ON partners
  FOR EACH ROW EXECUTE FUNCTION partner_collector_hosts_notify();
--> statement-breakpoint
CREATE TRIGGER partners_collector_hosts_notify_change AFTER UPDATE OF record_name, domain OR DELETE ON partners
  FOR EACH ROW EXECUTE FUNCTION partner_collector_hosts_notify();
