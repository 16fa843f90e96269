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
  }, 60_000);

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

  it('an insert that starts later commits later: a higher seq is never visible before a lower one', async () => {
    const stream = await openStream(b);
    const insert = (db: typeof database.db, id: string) =>
      db.execute(sql`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
        values (${merchantId}, ${id}, ${tagId}, 'm', 'PageView', now(), '{}')`);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstInserted = () => {};
    const inserted = new Promise<void>((resolve) => {
      firstInserted = resolve;
    });
    // T1 inserts (taking the lower seq) and stays open; T2 then inserts on another connection.
    const t1 = database.db.transaction(async (tx) => {
      await insert(tx as unknown as typeof database.db, 'order-1');
      firstInserted();
      await held;
    });
    await inserted;
    let t2Done = false;
    const t2 = insert(database.db, 'order-2').then(() => {
      t2Done = true;
    });
    // T2 waits on the merchant's ordering row (event_seqs) until T1 ends (without it, T2 would
    // commit first and a reader resuming from its seq would skip T1's event for good).
    const deadline = Date.now() + 5000;
    for (;;) {
      const [row] = (await database.db.execute(
        sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`,
      )) as unknown as { n: number }[];
      if ((row?.n ?? 0) > 0) break;
      expect(t2Done).toBe(false);
      if (Date.now() > deadline) throw new Error('the second insert never waited for the first');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(stream.events()).toHaveLength(0);
    release();
    await Promise.all([t1, t2]);
    await stream.waitForEvents(2);
    const got = stream.events<Json>();
    expect(got.map((e) => e.id)).toEqual(['order-1', 'order-2']);
    expect(got[0].seq).toBeLessThan(got[1].seq);
    stream.close();
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
