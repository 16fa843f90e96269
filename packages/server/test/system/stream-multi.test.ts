// Fan-out across server processes through PostgreSQL LISTEN/NOTIFY: two real server processes
// (`node --import tsx src/main.ts`) on one real database. Runs only with TEST_DATABASE_URL.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { type ServerProcess, spawnServer, TEST_TARGET_HOST } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { SseClient } from '../helpers/sse.js';

const DATABASE_URL = process.env.TEST_DATABASE_URL;

function startServerProcess(url: string): Promise<ServerProcess> {
  return spawnServer({
    inheritEnv: true,
    env: {
      DATABASE_URL: url,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      TAG_TARGET_HOST: TEST_TARGET_HOST,
      STREAM_PING_MS: '1000',
      COLLECT_RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      // The collector volume quotas off, as the rate limits.
      COLLECT_TAG_EVENTS_PER_MINUTE: '0',
      COLLECT_TAG_BYTES_PER_MINUTE: '0',
      COLLECT_TAG_EVENTS_PER_DAY: '0',
      COLLECT_TAG_BYTES_PER_DAY: '0',
      COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
    },
  });
}

describe.skipIf(!DATABASE_URL)('two server processes on one PostgreSQL', () => {
  let database: DatabaseHandle;
  let a: ServerProcess;
  let b: ServerProcess;
  let apiKey: string;
  let merchantId: string;
  let tagId: string;

  beforeAll(async () => {
    const url = DATABASE_URL as string;
    database = await openDatabase({ kind: 'postgres', url, maxConnections: 4 });
    [a, b] = await Promise.all([startServerProcess(url), startServerProcess(url)]);
    const domain = `p-${randomBytes(4).toString('hex')}.partner-tags-test.com`;
    const partner = await onboardPartner(database.db, { name: 'Stream Partner', domain }, TEST_TARGET_HOST);
    apiKey = partner.apiKey;
    const merchant = await api(b, apiKey).post('/v1/partners/merchant', { name: 'Shop' });
    expect(merchant.status).toBe(201);
    merchantId = merchant.body.merchantId;
    const tag = await api(b, apiKey).post('/v1/partners/tag/generate', { merchantId, domain });
    expect(tag.status).toBe(200);
    tagId = tag.body.tagId;
  }, 120_000);

  afterAll(async () => {
    for (const server of [a, b]) if (server && server.child.exitCode === null) server.child.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
    await database?.close();
  });

  const collect = (server: ServerProcess, events: Json[]) => api(server).post('/v1/collect', { tagId, events });
  const openStream = (server: ServerProcess, lastEventId?: string) =>
    SseClient.open(`${server.url}/v1/partners/events/stream?merchantId=${merchantId}`, {
      apiKey,
      ...(lastEventId === undefined ? {} : { lastEventId }),
    });

  it('a stream on server A receives events ingested through server B within 1 s', async () => {
    const stream = await openStream(a);
    expect(stream.status).toBe(200);
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await collect(b, [{ id: `cross-${i}`, event_name: 'Purchase', data: { i } }]);
      expect(res.status).toBe(202);
      await stream.waitForEvents(i + 1, 1000);
      latencies.push(performance.now() - started);
    }
    expect(stream.events<Json>().map((e) => e.id)).toEqual(['cross-0', 'cross-1', 'cross-2', 'cross-3', 'cross-4']);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    stream.close();
  });

  it('concurrent ingestion through both servers: every event once, in seq order, on both servers', async () => {
    const onA = await openStream(a);
    const onB = await openStream(b);
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      const events = Array.from({ length: 5 }, (_, j) => ({ id: `conc-${i}-${j}`, event_name: 'PageView' }));
      writes.push(collect(i % 2 === 0 ? a : b, events));
    }
    const results = (await Promise.all(writes)) as { status: number }[];
    expect(results.every((r) => r.status === 202)).toBe(true);
    await onA.waitForEvents(200, 5000);
    await onB.waitForEvents(200, 5000);
    const stored = (await database.db.execute(
      sql`select id, seq from events where merchant_id = ${merchantId} and id like 'conc-%' order by seq`,
    )) as unknown as { id: string; seq: string }[];
    expect(stored).toHaveLength(200);
    for (const stream of [onA, onB]) {
      await new Promise((r) => setTimeout(r, 100));
      const got = stream.events<Json>();
      expect(got.map((e) => e.id)).toEqual(stored.map((row) => row.id));
      expect(got.map((e) => String(e.seq))).toEqual(stored.map((row) => String(row.seq)));
    }
    onA.close();
    onB.close();
  });

  it('resume on the other server: disconnect, ingest 50, reconnect with the last id: exactly those 50', async () => {
    const first = await openStream(a);
    await collect(b, [{ id: 'r-first', event_name: 'PageView' }]);
    await first.waitForEvents(1);
    const lastId = first.frames.at(-1)?.id as string;
    first.close();
    for (let i = 0; i < 5; i++) {
      const events = Array.from({ length: 10 }, (_, j) => ({ id: `r-${i}-${j}`, event_name: 'PageView' }));
      expect((await collect(i % 2 ? a : b, events)).status).toBe(202);
    }
    const resumed = await openStream(b, lastId);
    await resumed.waitForEvents(50);
    await new Promise((r) => setTimeout(r, 150));
    const stored = (await database.db.execute(
      sql`select id from events where merchant_id = ${merchantId} and seq > ${Number(lastId)} order by seq`,
    )) as unknown as { id: string }[];
    expect(stored).toHaveLength(50);
    expect(resumed.events<Json>().map((e) => e.id)).toEqual(stored.map((row) => row.id));
    resumed.close();
  });

  it('commits out of order: a stream on either server waits for the open transaction, then sends both in seq order', async () => {
    const onA = await openStream(a);
    const onB = await openStream(b);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstInserted = () => {};
    const inserted = new Promise<void>((resolve) => {
      firstInserted = resolve;
    });
    // T1 inserts (its xid gives the lower seq) and stays open; another name than T2's events, whose
    // day-count row (merchant, day, name) it would otherwise hold to commit.
    const t1 = database.db.transaction(async (tx) => {
      await tx.execute(sql`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
        values (${merchantId}, 'order-1', ${tagId}, 'm', 'Held', now(), '{}')`);
      firstInserted();
      await held;
    });
    await inserted;
    try {
      // T2 commits first, through server B, without waiting for T1...
      expect((await collect(b, [{ id: 'order-2', event_name: 'PageView' }])).status).toBe(202);
      await new Promise((r) => setTimeout(r, 300));
      // ...and no stream sends it while T1 is open (a lower seq may still commit).
      expect(onA.events()).toHaveLength(0);
      expect(onB.events()).toHaveLength(0);
    } finally {
      release();
      await t1;
    }
    for (const stream of [onA, onB]) {
      await stream.waitForEvents(2);
      const got = stream.events<Json>();
      expect(got.map((e) => e.id)).toEqual(['order-1', 'order-2']);
      expect(got[0].seq).toBeLessThan(got[1].seq);
      stream.close();
    }
  });

  it('SIGTERM ends open streams and the process exits cleanly', async () => {
    const stream = await openStream(a);
    const started = Date.now();
    a.child.kill('SIGTERM');
    await stream.closed;
    expect(await a.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    // Server B still streams.
    const onB = await openStream(b);
    await collect(b, [{ id: 'after-sigterm', event_name: 'PageView' }]);
    await onB.waitForEvents(1);
    onB.close();
  });
});
