import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../src/db/read-rows.js';
import { hashApiKey } from '../src/kernel/bearer-tokens.js';
import { ApiKeyCache, KEY_CACHE_TTL_MS } from '../src/runtime/keys/key-cache.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const status = async (key: string) => (await api(server, key).get('/v1/partners/merchant')).status;

/** Polls until `done` holds; throws after `withinMs`. */
async function waitFor(done: () => boolean, withinMs: number): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > withinMs) throw new Error(`condition not met after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Polls until the key answers `expected`; returns how long that took. */
async function until(key: string, expected: number, withinMs = 2_000): Promise<number> {
  const start = Date.now();
  for (;;) {
    if ((await status(key)) === expected) return Date.now() - start;
    if (Date.now() - start > withinMs) throw new Error(`still not ${expected} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('API-key cache', () => {
  it('caches a verified key while the server listens for key changes', async () => {
    const partner = await server.createPartner();
    expect(await status(partner.apiKey)).toBe(200);
    const cache = server.app.deps.keys.cache;
    expect(cache.enabled).toBe(true);
    expect(cache.get(hashApiKey(partner.apiKey))?.partner.id).toBe(partner.partnerId);
  });

  it('forgets a key revoked behind its back (plain SQL, as another process would): the notification reaches it', async () => {
    const partner = await server.createPartner();
    expect(await status(partner.apiKey)).toBe(200);
    expect(await status(partner.apiKey)).toBe(200);
    await server.app.deps.db.execute(
      sql`update api_keys set revoked_at = now() where partner_id = ${partner.partnerId}::uuid`,
    );
    // Well under the cache's time to live: only the notification can have done it.
    expect(await until(partner.apiKey, 401, KEY_CACHE_TTL_MS / 5)).toBeLessThan(KEY_CACHE_TTL_MS / 5);
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    'forgets a key revoked from another connection to PostgreSQL within a second',
    async () => {
      const partner = await server.createPartner();
      expect(await status(partner.apiKey)).toBe(200);
      const other = postgres(process.env.TEST_DATABASE_URL as string, { max: 1, onnotice: () => {} });
      try {
        await other`update api_keys set revoked_at = now() where partner_id = ${partner.partnerId}::uuid`;
      } finally {
        await other.end({ timeout: 5 });
      }
      expect(await until(partner.apiKey, 401, 1_000)).toBeLessThan(1_000);
    },
  );

  it('ends a cached key at its expiry without any notification', async () => {
    const partner = await server.createPartner();
    const cache = server.app.deps.keys.cache;
    const hash = hashApiKey(partner.apiKey);
    // Notifications reach the one LISTEN connection in commit order: once a probe sent after the
    // update is in, the update's (and the onboarding's) invalidations are behind us, and nothing
    // late can empty the cache under the test.
    let probed = false;
    const unlisten = await server.app.database.listen('key_cache_test_probe', () => {
      probed = true;
    });
    try {
      // Well inside the cache's time to live, so only the expiry can end the entry.
      const [row] = rowsOf<{ ms: string }>(
        await server.app.deps.db.execute(
          sql`update api_keys set expires_at = now() + interval '4 seconds' where partner_id = ${partner.partnerId}::uuid returning floor(extract(epoch from expires_at) * 1000)::bigint::text as ms`,
        ),
      );
      const expiresAt = Number(row?.ms);
      await server.app.deps.db.execute(sql`select pg_notify('key_cache_test_probe', 'after the update')`);
      await waitFor(() => probed, 5_000);
      await until(partner.apiKey, 200, 5_000);
      const cachedAt = Date.now();
      const version = cache.version;
      expect(cachedAt).toBeLessThan(expiresAt);
      expect(cache.get(hash)?.expiresAt).toBe(expiresAt);
      await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 1));
      expect(await status(partner.apiKey)).toBe(401);
      // No invalidation came in between, and the entry's time to live had not run out.
      expect(cache.version).toBe(version);
      expect(expiresAt - cachedAt).toBeLessThan(KEY_CACHE_TTL_MS);
    } finally {
      await unlisten();
    }
  });

  it('does not notify on last_used_at writes (they would empty the cache once a minute per key)', async () => {
    const partner = await server.createPartner();
    expect(await status(partner.apiKey)).toBe(200);
    const cache = server.app.deps.keys.cache;
    await server.app.deps.db.execute(
      sql`update api_keys set last_used_at = now() where partner_id = ${partner.partnerId}::uuid`,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(cache.get(hashApiKey(partner.apiKey))).toBeDefined();
  });
});

describe('ApiKeyCache', () => {
  const key = {
    keyId: 'k1',
    keyHash: 'h1',
    expiresAt: null,
    partner: { id: 'p1', name: 'P', domain: 'p.example', recordName: 'edge-aaaaaa', livemode: true },
  };

  it('caches nothing until something listens for invalidations', () => {
    const cache = new ApiKeyCache();
    cache.set(cache.begin(), key);
    expect(cache.get('h1')).toBeUndefined();
    cache.watch(1);
    cache.set(cache.begin(), key);
    expect(cache.get('h1')).toEqual(key);
    cache.watch(-1);
    expect(cache.get('h1')).toBeUndefined();
  });

  it('drops the answer of a lookup that started before an invalidation', () => {
    const cache = new ApiKeyCache();
    cache.watch(1);
    const token = cache.begin();
    cache.invalidate();
    cache.set(token, key);
    expect(cache.get('h1')).toBeUndefined();
  });

  it('trusts an entry for the time to live at most', () => {
    const cache = new ApiKeyCache();
    cache.watch(1);
    cache.set(cache.begin(), key, 1_000);
    expect(cache.get('h1', 1_000 + KEY_CACHE_TTL_MS - 1)).toEqual(key);
    expect(cache.get('h1', 1_000 + KEY_CACHE_TTL_MS)).toBeUndefined();
  });
});
