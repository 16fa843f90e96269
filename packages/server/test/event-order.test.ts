// Per-merchant ordering (migration 0026): seq comes from the writing transaction's id, the events of
// one request keep the request's array order as one contiguous range, no writer waits for another,
// and readers stop below the horizon so commits in any order never make a resume skip or repeat.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../src/db/read-rows.js';
import type { EventSubscription } from '../src/features/events/stream/subscription.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { collectOk, preverifiedTag } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const DATABASE_URL = process.env.TEST_DATABASE_URL;

type Stored = { id: string; seq: number };
async function storedOf(merchantId: string): Promise<Stored[]> {
  const rows = rowsOf<{ id: string; seq: string | number }>(
    await server.app.database.db.execute(
      sql`select id, seq from events where merchant_id = ${merchantId}::uuid order by seq`,
    ),
  );
  return rows.map((r) => ({ id: r.id, seq: Number(r.seq) }));
}

/** Each seq one more than the one before (one statement's rows of one merchant). */
const consecutive = (seqs: number[]) => seqs.every((s, i) => i === 0 || s === (seqs[i - 1] as number) + 1);

async function take(subscription: EventSubscription, n: number): Promise<string[]> {
  const ids: string[] = [];
  const deadline = setTimeout(() => subscription.close(), 5000);
  try {
    while (ids.length < n) {
      const event = await subscription.next();
      if (!event) throw new Error(`stream ended after ${ids.length} of ${n} events`);
      ids.push(event.id);
    }
  } finally {
    clearTimeout(deadline);
  }
  return ids;
}

describe('event order', () => {
  it("stores a request's events in its array order, as one contiguous range per merchant", async () => {
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
    const stored = await storedOf(a.merchantId);
    expect(stored.map((r) => r.id)).toEqual(ids);
    const seqs = stored.map((r) => r.seq);
    expect(consecutive(seqs.slice(0, 30))).toBe(true);
    expect(consecutive(seqs.slice(30))).toBe(true);
    // A later transaction numbers above an earlier one.
    expect(seqs[30]).toBeGreaterThan(seqs[29] as number);
    const [other] = await storedOf(b.merchantId);
    expect(other?.seq).toBeGreaterThan(seqs[29] as number);
    expect(other?.seq).toBeLessThan(seqs[30] as number);
    // Below 10^15: the API's 15-digit event ids (and JS numbers) hold every seq.
    expect(Math.max(...seqs)).toBeLessThan(1e15);
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
    const stored = rowsOf<{ id: string; seq: string | number; event_name: string }>(result);
    expect(stored.map((r) => `${r.id}:${r.event_name}`)).toEqual([
      'r1:PageView',
      'r2:PageView',
      'r3:PageView',
      'r4:PageView',
    ]);
    const seqs = stored.map((r) => Number(r.seq));
    expect(consecutive(seqs.slice(0, 3))).toBe(true);
    // Each seq's number within its transaction: r4 is the second of its statement (r1's went unused).
    const numbers = rowsOf<{ c: string | number }>(
      await server.app.database.db.execute(sql`select (seq - events_seq_floor('0'::xid8)) % 8192 as c
        from events where merchant_id = ${tag.merchantId}::uuid order by seq`),
    );
    expect(numbers.map((r) => Number(r.c))).toEqual([0, 1, 2, 1]);
  });

  it('numbers rows inserted without seq (backfills) after the merchant’s last one', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, [{ id: 'x1', event_name: 'PageView' }]);
    await server.app.database.db.execute(sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
      select ${tag.merchantId}::uuid, 'bf-' || g, ${tag.tagId}::uuid, 'm', 'PageView', now(), '{}' from generate_series(1, 3) g`);
    await collectOk(server, tag.tagId, [{ id: 'x2', event_name: 'PageView' }]);
    const stored = await storedOf(tag.merchantId);
    expect(stored.map((r) => r.id)).toEqual(['x1', 'bf-1', 'bf-2', 'bf-3', 'x2']);
    expect(consecutive(stored.slice(1, 4).map((r) => r.seq))).toBe(true);
  });

  it('statements of one transaction (the trigger and the ingestion insert) never share a number', async () => {
    const tag = await preverifiedTag(server);
    const { storeEvents } = await import('../src/features/events/ingest/store-events.js');
    const row = (id: string) => ({
      merchantId: tag.merchantId,
      tagId: tag.tagId,
      id,
      muid: 'm',
      eventName: 'PageView',
      eventTime: new Date().toISOString(),
      rawData: '{}',
    });
    await server.app.database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
        values (${tag.merchantId}::uuid, 't-0', ${tag.tagId}::uuid, 'm', 'PageView', now(), '{}')`);
      await storeEvents(tx as never, [row('t-1'), row('t-2')]);
      await storeEvents(tx as never, [row('t-3')]);
    });
    const stored = await storedOf(tag.merchantId);
    expect(stored.map((r) => r.id)).toEqual(['t-0', 't-1', 't-2', 't-3']);
    expect(consecutive(stored.map((r) => r.seq))).toBe(true);
  });

  it('a batch with more rows of one merchant than a transaction holds is stored in array order', async () => {
    const tag = await preverifiedTag(server);
    const { storeEvents, SEQS_PER_TRANSACTION } = await import('../src/features/events/ingest/store-events.js');
    const ids = Array.from({ length: SEQS_PER_TRANSACTION + 5 }, (_, i) => `big-${i}`);
    const now = new Date().toISOString();
    const stored = await storeEvents(
      server.app.database.db,
      ids.map((id) => ({
        merchantId: tag.merchantId,
        tagId: tag.tagId,
        id,
        muid: 'm',
        eventName: 'PageView',
        eventTime: now,
        rawData: '{}',
      })),
    );
    expect(stored.get(tag.tagId)).toBe(ids.length);
    expect((await storedOf(tag.merchantId)).map((r) => r.id)).toEqual(ids);
  });

  it('a stream that opens with no resume id sends what commits after it, nothing from before', async () => {
    const tag = await preverifiedTag(server);
    await collectOk(server, tag.tagId, [{ id: 'before', event_name: 'PageView' }]);
    const stream = await server.app.deps.streams.subscribe({ merchantId: tag.merchantId, names: [] });
    await collectOk(server, tag.tagId, [{ id: 'after', event_name: 'PageView' }]);
    expect(await take(stream, 1)).toEqual(['after']);
    stream.close();
  });

  it.skipIf(!DATABASE_URL)(
    'commits out of order: readers stop at the open transaction, then see both in seq order, once',
    async () => {
      const tag = await preverifiedTag(server);
      const db = server.app.database.db;
      await collectOk(server, tag.tagId, [{ id: 'first', event_name: 'PageView' }]);
      const [start] = await storedOf(tag.merchantId);
      const live = await server.app.deps.streams.subscribe({ merchantId: tag.merchantId, names: [] });
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inserted = () => {};
      const t1Inserted = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      // T1 takes its xid (the lower seq) and inserts, then stays open while T2 commits. Another
      // event name: a day-count row (merchant, day, name) is still locked to commit (migration 0003).
      const t1 = db.transaction(async (tx) => {
        await tx.execute(sql`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
          values (${tag.merchantId}, 'held', ${tag.tagId}, 'm', 'Held', now(), '{}')`);
        inserted();
        await held;
      });
      await t1Inserted;
      try {
        // T2 neither waits for T1 nor becomes readable before it.
        await collectOk(server, tag.tagId, [
          { id: 'late-0', event_name: 'PageView' },
          { id: 'late-1', event_name: 'PageView' },
        ]);
        const visible = rowsOf<{ id: string }>(
          await db.execute(sql`select id from events where merchant_id = ${tag.merchantId}::uuid
            and seq > ${start?.seq ?? 0} and seq < events_horizon_seq() order by seq`),
        );
        expect(visible).toEqual([]);
        const resumed = await server.app.deps.streams.subscribe({
          merchantId: tag.merchantId,
          names: [],
          afterSeq: start?.seq ?? 0,
        });
        await new Promise((r) => setTimeout(r, 200));
        expect(live.heldBytes).toBe(0);
        release();
        await t1;
        expect(await take(live, 3)).toEqual(['held', 'late-0', 'late-1']);
        expect(await take(resumed, 3)).toEqual(['held', 'late-0', 'late-1']);
        const stored = await storedOf(tag.merchantId);
        expect(stored.map((r) => r.id)).toEqual(['first', 'held', 'late-0', 'late-1']);
        // Nothing twice: one more event is the next thing either stream sends.
        await collectOk(server, tag.tagId, [{ id: 'next', event_name: 'PageView' }]);
        expect(await take(live, 1)).toEqual(['next']);
        expect(await take(resumed, 1)).toEqual(['next']);
        resumed.close();
      } finally {
        release();
        await t1;
        live.close();
      }
    },
  );

  it.skipIf(!DATABASE_URL)('a transaction open in another database of the server holds no stream back', async () => {
    const tag = await preverifiedTag(server);
    const url = new URL(DATABASE_URL as string);
    url.pathname = '/postgres';
    const other = postgres(url.toString(), { max: 1, onnotice: () => {} });
    const stream = await server.app.deps.streams.subscribe({ merchantId: tag.merchantId, names: [] });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begun = () => {};
    const hasXid = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const open = other.begin(async (tx) => {
      await tx`select pg_current_xact_id()`;
      begun();
      await held;
    });
    try {
      await hasXid;
      await collectOk(server, tag.tagId, [{ id: 'while-open', event_name: 'PageView' }]);
      expect(await take(stream, 1)).toEqual(['while-open']);
    } finally {
      release();
      await open;
      await other.end({ timeout: 5 });
      stream.close();
    }
  });

  it.skipIf(!DATABASE_URL)(
    'an open event write of one merchant does not hold up another merchant’s, nor its own',
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
      // Another event name than the writes below: the day-count row of (merchant, day, name) is
      // still locked to commit (migration 0003); the seq is not.
      const t1 = db.transaction(async (tx) => {
        await tx.execute(sql`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
          values (${a.merchantId}, 'held', ${a.tagId}, 'm', 'Held', now(), '{}')`);
        inserted();
        await held;
      });
      await aInserted;
      try {
        // B's write, and another of A, complete while A's transaction stays open.
        await collectOk(server, b.tagId, [{ id: 'free', event_name: 'PageView' }]);
        await collectOk(server, a.tagId, [{ id: 'free-too', event_name: 'PageView' }]);
      } finally {
        release();
        await t1;
      }
    },
  );
});
