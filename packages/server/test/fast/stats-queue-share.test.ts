import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { storeEvents } from '../../src/features/events/ingest/store-events.js';
import { StatsStore } from '../../src/features/stats/store.js';
import { createLogger } from '../../src/kernel/logger.js';
import { type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// The statistics' queue (features/stats/transfer.ts) holds a bounded number of events, one
// merchant at most half of it: a merchant's flood leaves its
// excess to the recovery (outbox rows in PostgreSQL), never another merchant's events.
let app: InProcessApp;
let store: StatsStore;
beforeAll(async () => {
  app = await startInProcessApp();
  // A store of its own (its own ClickHouse database) whose queue is sent only when asked.
  store = await StatsStore.open(
    {
      kind: 'chdb',
      path: path.join(app.env.DATA_DIR, 'clickhouse'),
      database: `queue_share_${randomUUID().slice(0, 8)}`,
    },
    app.deps.db,
    createLogger(app.env),
    { flushMs: 3_600_000, maxQueued: 10 },
  );
});
afterAll(async () => {
  await store?.close();
  await app?.close();
});

async function merchant(): Promise<string> {
  const partner = await app.createPartner();
  return (await app.caller(partner.apiKey).merchant.create({ name: 'queued' })).merchantId;
}

let serial = 0;
/** Stores `n` events of each merchant in one statement, handed to the store as ingestion does. */
async function storeFor(counts: Record<string, number>): Promise<void> {
  const rows = Object.entries(counts).flatMap(([merchantId, n]) =>
    Array.from({ length: n }, () => ({
      merchantId,
      tagId: randomUUID(),
      id: `q-${++serial}`,
      muid: `v-${serial}`,
      eventName: 'PageView',
      eventTime: '2026-06-01T10:00:00.000Z',
      rawData: '{}',
    })),
  );
  await storeEvents(app.deps.db, rows, store);
}

/** Outbox rows of the merchant still in PostgreSQL. */
async function outbox(merchantId: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await app.deps.db.execute(sql`select count(*)::int as n from stats_outbox where merchant_id = ${merchantId}::uuid`),
  );
  return Number(row?.n);
}

const summary = async (merchantId: string) =>
  (
    await store.points('test', {
      merchantId,
      start: Date.UTC(2026, 5, 1),
      end: Date.UTC(2026, 5, 2),
      names: [],
      filters: [],
      cut: { splitAt: Date.UTC(2026, 5, 2) },
    })
  ).get('0')?.events ?? 0;

describe('the statistics queue', () => {
  it("leaves a merchant's events past half the queue to the recovery, not another merchant's", async () => {
    const flooding = await merchant();
    const quiet = await merchant();
    await storeFor({ [flooding]: 5 }); // its half of 10
    await storeFor({ [flooding]: 1, [quiet]: 3 }); // one more of it is past its half; the other's fit
    await storeFor({ [quiet]: 2 });
    await store.recover(); // nothing yet: every outbox row is still claimed by this process
    expect(await summary(quiet)).toBe(5);
    expect(await summary(flooding)).toBe(5);
    expect([await outbox(flooding), await outbox(quiet)]).toEqual([1, 0]);
    // The claim runs out (a crash or a refusal alike): the recovery sends it from PostgreSQL.
    await app.deps.db.execute(sql`update stats_outbox set claimed_until = now() - interval '1 second'`);
    expect(await store.recover()).toBe(1);
    expect([await summary(flooding), await outbox(flooding)]).toEqual([6, 0]);
  });
});
