-- API-key cache invalidation (custom migration; drizzle-kit cannot express triggers).
--
-- Every server process caches verified keys in memory (auth/key-cache.ts). Any change that can end
-- a key's validity (revoked, expiry moved, hash or owner changed, key or partner deleted) and any
-- change of a partner's own row notifies channel `partner_api_keys` at commit; every process
-- LISTENs and drops its cache. `last_used_at` updates do not notify (UPDATE OF lists the columns).
CREATE OR REPLACE FUNCTION partner_api_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('partner_api_keys', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_notify_change AFTER UPDATE OF revoked_at, expires_at, key_hash, partner_id OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION partner_api_keys_notify();
--> statement-breakpoint
CREATE TRIGGER partners_notify_change AFTER UPDATE OR DELETE ON partners
  FOR EACH STATEMENT EXECUTE FUNCTION partner_api_keys_notify();
