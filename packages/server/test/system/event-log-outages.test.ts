// Log mode through outages, against the real NATS and the real PostgreSQL, each behind a loopback
// TCP proxy of our own that the test cuts (the services themselves are never stopped).
// 1. NATS away: collectors answer 503 with Retry-After within 2 s, then recover by themselves.
// 2. PostgreSQL away for 30 s (15 s silent, 15 s refusing) under steady collector load: 0 non-2xx answers, and after recovery
//    every acknowledged event is stored exactly once.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { deleteLogStream, NATS_URL, natsAnswers, natsPort, uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import { preverifiedTag } from '../helpers/fixtures.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  startTcpProxy,
  type TcpProxy,
  viaPort,
} from '../helpers/hardening.js';

const natsUp = await natsAnswers();
const pgUp = await postgresAnswers();
if (!natsUp) console.warn(`event-log outage tests skipped: NATS does not answer at ${NATS_URL}`);
if (!pgUp) console.warn('event-log outage tests skipped: PostgreSQL does not answer at 127.0.0.1:5432');
const available = natsUp && pgUp;

/** Measured figures, printed at the end. */
const figures: Record<string, unknown> = {};
afterAll(() => {
  if (Object.keys(figures).length > 0) console.log(`event-log outage figures: ${JSON.stringify(figures)}`);
});

interface Sent {
  status: number;
  retryAfter: string | null;
  body: unknown;
  ms: number;
}

async function collect(url: string, tagId: string, events: { id: string; event_name: string }[]): Promise<Sent> {
  const started = performance.now();
  try {
    const res = await fetch(`${url}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagId, events }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body, ms: performance.now() - started };
  } catch (error) {
    return { status: 0, retryAfter: null, body: String(error), ms: performance.now() - started };
  }
}

describe.skipIf(!available)('log mode: NATS away (a proxy of our own in front of it is cut)', () => {
  const prefix = uniqueLogPrefix();
  let proxy: TcpProxy;
  let server: TestServer;

  beforeAll(async () => {
    proxy = await startTcpProxy(natsPort());
    server = await startTestServer({
      env: { EVENT_LOG_URL: `nats://127.0.0.1:${proxy.port}`, EVENT_LOG_PREFIX: prefix },
    });
  }, 60_000);
  afterAll(() => deleteLogStream(prefix));
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After within 2 s while NATS is away, and recovers by itself', async () => {
    const tag = await preverifiedTag(server);
    const event = () => [{ id: randomUUID(), event_name: 'PageView' }];
    expect((await collect(server.url, tag.tagId, event())).status).toBe(202);

    await proxy.setMode('refuse');
    proxy.cutAll();
    const down: Sent[] = [];
    for (let i = 0; i < 6; i++) down.push(await collect(server.url, tag.tagId, event()));
    for (const r of down) {
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ message: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
      expect(Number(r.retryAfter)).toBeGreaterThan(0);
      expect(r.ms).toBeLessThan(2_000);
    }
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { database: 'up', log: 'down' } });
    figures.natsDownWorstMs = Math.round(Math.max(...down.map((r) => r.ms)));

    await proxy.setMode('forward');
    const back = performance.now();
    const ids: string[] = [];
    await waitFor(
      async () => {
        const e = event();
        const r = await collect(server.url, tag.tagId, e);
        if (r.status === 202) ids.push(e[0]!.id);
        return r.status === 202;
      },
      15_000,
      'the collector to accept again',
    );
    figures.natsRecoveryMs = Math.round(performance.now() - back);
    // The writer resumed too: what was accepted after the outage is stored.
    await waitFor(
      async () =>
        rowsOf(
          await server.app.database.db.execute(
            sql`select 1 from events where merchant_id = ${tag.merchantId}::uuid and id = ${ids[0]!}`,
          ),
        ).length === 1,
      15_000,
      'the writer to store events after the outage',
    );
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  }, 60_000);
});

describe.skipIf(!available)('log mode: PostgreSQL away for 30 s under steady collector load', () => {
  const prefix = uniqueLogPrefix();
  let scratch: ScratchDatabase;
  let proxy: TcpProxy;
  let server: TestServer;

  beforeAll(async () => {
    scratch = await createScratchDatabase('log_outage');
    proxy = await startTcpProxy(Number(new URL(scratch.url).port || 5432));
    server = await startTestServer({
      databaseUrl: viaPort(scratch.url, proxy.port),
      env: { EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix },
    });
  }, 60_000);
  afterAll(() => deleteLogStream(prefix));
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
    await scratch?.drop();
  });

  it('answers 202 to every collector request throughout; every acknowledged event is stored exactly once', async () => {
    const tags = [await preverifiedTag(server), await preverifiedTag(server)];
    const acknowledged: { merchantId: string; id: string }[] = [];
    const statuses = new Map<number, number>();
    let stop = false;
    let slowest = 0;
    const senders = Array.from({ length: 8 }, async (_, sender) => {
      for (let i = 0; !stop; i++) {
        const tag = tags[(sender + i) % tags.length]!;
        const events = Array.from({ length: 5 }, (_, k) => ({ id: `s${sender}-${i}-${k}`, event_name: 'PageView' }));
        const r = await collect(server.url, tag.tagId, events);
        slowest = Math.max(slowest, r.ms);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 202) for (const e of events) acknowledged.push({ merchantId: tag.merchantId, id: e.id });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // 15 s of a silent database (connections stay open, nothing answers: every query waits for
    // its deadline), then 15 s of a refusing one (connections reset, new ones refused).
    await proxy.setMode('blackhole');
    const cutAt = acknowledged.length;
    slowest = 0;
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    await proxy.setMode('refuse');
    proxy.cutAll();
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const duringCut = acknowledged.length - cutAt;
    const slowestDuringCut = slowest;
    await proxy.setMode('forward');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    stop = true;
    await Promise.all(senders);

    expect([...statuses.keys()]).toEqual([202]);
    expect(duringCut).toBeGreaterThan(0);
    const db = server.app.database.db;
    const count = async () =>
      Number(
        rowsOf(
          await db.execute(
            sql`select count(*)::int as n from events where merchant_id in (${tags[0]!.merchantId}::uuid, ${tags[1]!.merchantId}::uuid)`,
          ),
        )[0]?.n,
      );
    const drainStarted = performance.now();
    await waitFor(async () => (await count().catch(() => 0)) >= acknowledged.length, 60_000, 'the backlog to drain');
    figures.dbCut = {
      requests: statuses.get(202),
      acknowledgedEvents: acknowledged.length,
      acknowledgedDuringCut: duringCut,
      slowestAnswerDuringCutMs: Math.round(slowestDuringCut),
      drainAfterRecoveryMs: Math.round(performance.now() - drainStarted),
    };
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stored = rowsOf(
      await db.execute(
        sql`select merchant_id::text as m, id from events where merchant_id in (${tags[0]!.merchantId}::uuid, ${tags[1]!.merchantId}::uuid)`,
      ),
    ).map((r) => `${r.m}/${r.id}`);
    // Exactly once: every acknowledged event, nothing else, no repeats.
    expect(stored.length).toBe(acknowledged.length);
    expect(new Set(stored)).toEqual(new Set(acknowledged.map((a) => `${a.merchantId}/${a.id}`)));
  }, 120_000);
});
