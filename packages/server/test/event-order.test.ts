// Per-merchant ordering (migration 0008): seq counts per merchant, the events of one request keep
// the request's array order, and writers of different merchants never wait for each other.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { collectOk, preverifiedTag } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const rowsOf = (result: unknown) =>
  (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { id: string; seq: string | number }[];

describe('event order', () => {
  it("stores a request's events in its array order, numbered 1.. per merchant", async () => {
    const a = await preverifiedTag(server);
    const b = await preverifiedTag(server);
    // Random ids: their sort order has nothing to do with the array order.
    const ids = Array.from({ length: 60 }, () => randomUUID());
    await collectOk(
      server,
      a.tagId,
      ids.slice(0, 30).map((id) => ({ id, event_name: 'PageView' })),
    );
    await collectOk(server, b.tagId, [{ id: 'other', event_name: 'PageView' }]);
    await collectOk(
      server,
      a.tagId,
      ids.slice(30).map((id) => ({ id, event_name: 'PageView' })),
    );
    const stored = rowsOf(
      await server.app.database.db.execute(
        sql`select id, seq from events where merchant_id = ${a.merchantId}::uuid order by seq`,
      ),
    );
    expect(stored.map((r) => r.id)).toEqual(ids);
    expect(stored.map((r) => Number(r.seq))).toEqual(ids.map((_, i) => i + 1));
    const other = rowsOf(
      await server.app.database.db.execute(sql`select id, seq from events where merchant_id = ${b.merchantId}::uuid`),
    );
    expect(other.map((r) => Number(r.seq))).toEqual([1]);
  });

  it('a repeated id takes its first occurrence’s place; a retried id is stored once and leaves a gap', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, [
      { id: 'r1', event_name: 'PageView' },
      { id: 'r2', event_name: 'PageView' },
      { id: 'r1', event_name: 'Purchase' },
      { id: 'r3', event_name: 'PageView' },
    ]);
    // r1 again (already stored: its number goes unused), then a new id.
    await collectOk(server, tag.tagId, [
      { id: 'r1', event_name: 'Purchase' },
      { id: 'r4', event_name: 'PageView' },
    ]);
    const result = await server.app.database.db.execute(
      sql`select id, seq, event_name from events where merchant_id = ${tag.merchantId}::uuid order by seq`,
    );
    const stored = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as {
      id: string;
      seq: string | number;
      event_name: string;
    }[];
    expect(stored.map((r) => `${r.id}:${r.seq}:${r.event_name}`)).toEqual([
      'r1:1:PageView',
      'r2:2:PageView',
      'r3:3:PageView',
      'r4:5:PageView',
    ]);
  });

  it('numbers rows inserted without seq (backfills) after the merchant’s last one', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, [{ id: 'x1', event_name: 'PageView' }]);
    await server.app.database.db.execute(sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select ${tag.merchantId}::uuid, 'bf-' || g, ${tag.tagId}::uuid, 'm', 'PageView', now(), '{}' from generate_series(1, 3) g`);
    await collectOk(server, tag.tagId, [{ id: 'x2', event_name: 'PageView' }]);
    const stored = rowsOf(
      await server.app.database.db.execute(
        sql`select id, seq from events where merchant_id = ${tag.merchantId}::uuid order by seq`,
      ),
    );
    expect(stored.map((r) => `${r.id}:${r.seq}`)).toEqual(['x1:1', 'bf-1:2', 'bf-2:3', 'bf-3:4', 'x2:5']);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'an open event write of one merchant does not hold up another merchant’s (no global lock)',
    async () => {
      const a = await preverifiedTag(server);
      const b = await preverifiedTag(server);
      const db = server.app.database.db;
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inserted = () => {};
      const aInserted = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      const t1 = db.transaction(async (tx) => {
        await tx.execute(sql`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
          values (${a.merchantId}, 'held', ${a.tagId}, 'm', 'PageView', now(), '{}')`);
        inserted();
        await held;
      });
      await aInserted;
      try {
        // B's write completes while A's transaction stays open.
        await collectOk(server, b.tagId, [{ id: 'free', event_name: 'PageView' }]);
      } finally {
        release();
        await t1;
      }
    },
  );
});
