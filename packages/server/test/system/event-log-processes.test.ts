// Log mode across server processes (`node --import tsx src/main.ts`) on the real NATS and a
// scratch PostgreSQL database:
// 1. a writer SIGKILLed mid-drain: another writer finishes the backlog, 0 lost, 0 duplicated;
// 2. two server processes (ROLE=all): each event stored once, and a stream on one sees what the
//    other ingested, in order.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { TEST_TARGET_HOST } from '../../src/testing/index.js';
import { deleteLogStream, logBacklog, NATS_URL, natsAnswers, uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  type ServerProcess,
  spawnServer,
} from '../helpers/hardening.js';
import { SseClient } from '../helpers/sse.js';

const natsUp = await natsAnswers();
const pgUp = await postgresAnswers();
if (!natsUp) console.warn(`event-log process tests skipped: NATS does not answer at ${NATS_URL}`);
if (!pgUp) console.warn('event-log process tests skipped: PostgreSQL does not answer at 127.0.0.1:5432');
const available = natsUp && pgUp;

const figures: Record<string, unknown> = {};
afterAll(() => {
  if (Object.keys(figures).length > 0) console.log(`event-log process figures: ${JSON.stringify(figures)}`);
});

describe.skipIf(!available)('log mode across processes', () => {
  const prefix = uniqueLogPrefix();
  let scratch: ScratchDatabase;
  let database: DatabaseHandle;
  let apiKey: string;
  let partnerDomain: string;
  const processes: ServerProcess[] = [];

  const start = async (env: Record<string, string>) => {
    const p = await spawnServer({
      DATABASE_URL: scratch.url,
      EVENT_LOG_URL: NATS_URL,
      EVENT_LOG_PREFIX: prefix,
      TAG_TARGET_HOST: TEST_TARGET_HOST,
      LOG_LEVEL: 'warn',
      STREAM_PING_MS: '1000',
      COLLECT_RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      // The collector volume quotas off, as the rate limits.
      COLLECT_TAG_EVENTS_PER_MINUTE: '0',
      COLLECT_TAG_BYTES_PER_MINUTE: '0',
      COLLECT_TAG_EVENTS_PER_DAY: '0',
      COLLECT_TAG_BYTES_PER_DAY: '0',
      COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
      ...env,
    });
    processes.push(p);
    return p;
  };

  /** A merchant with a preverified (live) tag, through the API of `server`. */
  const liveTag = async (server: ServerProcess) => {
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const merchant = (await (
      await fetch(`${server.url}/v1/partners/merchant`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Log shop' }),
      })
    ).json()) as { merchantId: string };
    const tag = (await (
      await fetch(`${server.url}/v1/partners/tag/generate`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ merchantId: merchant.merchantId, domain: partnerDomain }),
      })
    ).json()) as { tagId: string };
    return { merchantId: merchant.merchantId, tagId: tag.tagId };
  };

  const collect = async (server: ServerProcess, tagId: string, events: { id: string; event_name: string }[]) => {
    const res = await fetch(`${server.url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId, events }),
    });
    await res.arrayBuffer();
    return res.status;
  };

  const storedIds = async (merchantId: string) =>
    rowsOf(
      await database.db.execute(sql`select id from events where merchant_id = ${merchantId}::uuid order by seq`),
    ).map((r) => String(r.id));

  beforeAll(async () => {
    scratch = await createScratchDatabase('log_procs');
    database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 });
    partnerDomain = `p-${randomUUID().slice(0, 8)}.partner-tags-test.com`;
    apiKey = (await onboardPartner(database.db, { name: 'Log partner', domain: partnerDomain }, TEST_TARGET_HOST))
      .apiKey;
  }, 120_000);
  afterAll(() => deleteLogStream(prefix));
  afterAll(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await database?.close();
    await scratch?.drop();
  });

  it('a writer killed with SIGKILL mid-drain: another writer finishes, 0 lost, 0 duplicated', async () => {
    const api = await start({ ROLE: 'api' });
    const tag = await liveTag(api);
    // A backlog of 20,000 events in the log (ROLE=api: nothing drains it yet).
    const requests = 200;
    const perRequest = 100;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let r = next++; r < requests; r = next++) {
          const events = Array.from({ length: perRequest }, (_, k) => ({ id: `k${r}-${k}`, event_name: 'PageView' }));
          expect(await collect(api, tag.tagId, events)).toBe(202);
        }
      }),
    );
    const total = requests * perRequest;
    expect(await storedIds(tag.merchantId)).toHaveLength(0);

    // A writer with small batches, killed as soon as it has committed something.
    const writerEnv = { ROLE: 'writer', INGEST_BATCH_MAX: '300', EVENT_LOG_ACK_WAIT_SECONDS: '2' };
    const first = await start(writerEnv);
    const count = async () =>
      Number(
        rowsOf(
          await database.db.execute(
            sql`select count(*)::int as n from events where merchant_id = ${tag.merchantId}::uuid`,
          ),
        )[0]?.n,
      );
    await waitFor(async () => (await count()) > 0, 20_000, 'the first writer to commit');
    first.kill('SIGKILL');
    await first.exited;
    const atKill = await count();
    figures.sigkill = { total, storedAtKill: atKill };
    expect(atKill).toBeLessThan(total);

    // Another writer takes over; what the killed one held unacknowledged is redelivered.
    const started = performance.now();
    await start(writerEnv);
    await waitFor(async () => (await count()) >= total, 60_000, 'the backlog to drain');
    await waitFor(async () => (await logBacklog(prefix)) === 0, 10_000, 'the log to be empty');
    (figures.sigkill as Record<string, unknown>).secondWriterMs = Math.round(performance.now() - started);
    const ids = await storedIds(tag.merchantId);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    // Per request, the array order holds.
    const position = new Map(ids.map((id, i) => [id, i]));
    for (let r = 0; r < requests; r++) {
      const positions = Array.from({ length: perRequest }, (_, k) => position.get(`k${r}-${k}`) ?? -1);
      expect(positions.every((p, i) => i === 0 || p > positions[i - 1]!)).toBe(true);
    }
  }, 180_000);

  it('two server processes: each event stored once; a stream on one sees what the other ingested, in order', async () => {
    for (const p of processes.splice(0)) {
      p.kill('SIGTERM');
      await p.exited;
    }
    const a = await start({ ROLE: 'all' });
    const b = await start({ ROLE: 'all' });
    const tag = await liveTag(a);
    const stream = await SseClient.open(`${a.url}/v1/partners/events/stream?merchantId=${tag.merchantId}`, { apiKey });
    expect(stream.status).toBe(200);
    const requests = 40;
    const perRequest = 5;
    for (let r = 0; r < requests; r++) {
      const events = Array.from({ length: perRequest }, (_, k) => ({ id: `t${r}-${k}`, event_name: 'PageView' }));
      // Alternately through each process, some of it sent twice (a retry through the other one).
      expect(await collect(r % 2 ? b : a, tag.tagId, events)).toBe(202);
      if (r % 10 === 0) expect(await collect(r % 2 ? a : b, tag.tagId, events)).toBe(202);
    }
    const total = requests * perRequest;
    await stream.waitForEvents(total, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const streamed = stream.events<{ id: string; seq: number }>();
    stream.close();
    const stored = await storedIds(tag.merchantId);
    expect(stored).toHaveLength(total);
    expect(new Set(stored).size).toBe(total);
    // The stream on A: every event once, in the stored (seq) order, whichever process took it.
    expect(streamed.map((e) => e.id)).toEqual(stored);
    expect(streamed.every((e, i) => i === 0 || e.seq > streamed[i - 1]!.seq)).toBe(true);
  }, 180_000);
});
