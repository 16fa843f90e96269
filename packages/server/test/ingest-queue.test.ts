import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../src/app.js';
import { openDatabase } from '../src/db/client.js';
import { onboardPartner } from '../src/features/partners/onboard-partner.js';
import type { Env } from '../src/kernel/env.js';
import type { TestKnobs } from '../src/kernel/test-knobs.js';
import {
  type ServerProcess,
  spawnServer,
  startTestServer,
  TEST_TARGET_HOST,
  type TestServer,
  uniquePartnerDomain,
} from '../src/testing/index.js';
import { api } from './helpers/api.js';
import { allEvents, collectorHostOf, postEvents, preverifiedTag } from './helpers/collector.js';
import { collect } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** A second app on the test server's database with its own ingestion settings. */
function startSibling(env: Partial<Pick<Env, 'INGEST_QUEUE_MAX'>>, knobs: Partial<TestKnobs>): Promise<RunningApp> {
  return startApp(
    { ...server.app.deps.env, ...env },
    { database: server.app.database, dns: server.app.deps.dns, logger: server.app.deps.logger, knobs },
  );
}

const batch = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, event_name: 'PageView' }));

describe('the bounded event queue', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when full, and stores nothing of the refused request', async () => {
    // The delay holds the first request in the queue until drain() below (however slow the machine).
    const app = await startSibling({ INGEST_QUEUE_MAX: 5 }, { ingestFlushDelayMs: 10_000 });
    try {
      const tag = await preverifiedTag(server);
      const host = await collectorHostOf(server, tag);
      const sibling = { ...server, url: app.url };
      const first = collect(sibling, tag.tagId, batch('a', 5));
      while (app.deps.eventQueue.pending < 5) await new Promise((r) => setTimeout(r, 5));

      const refused = await collect(sibling, tag.tagId, batch('b', 1));
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body).toEqual({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('retry') });
      const viaCollector = await postEvents(app.url, host, { tagId: tag.tagId, events: batch('c', 1) });
      expect(viaCollector.status).toBe(503);
      expect(viaCollector.headers['retry-after']).toBe('1');

      await app.deps.eventQueue.drain();
      expect((await first).status).toBe(202);
      // Room again.
      const later = collect(sibling, tag.tagId, batch('d', 5));
      while (app.deps.eventQueue.pending < 5) await new Promise((r) => setTimeout(r, 5));
      await app.deps.eventQueue.drain();
      expect((await later).status).toBe(202);
      const ids = (await allEvents(server, tag.merchantId)).map((e: { id: string }) => e.id).sort();
      expect(ids).toEqual([...batch('a', 5), ...batch('d', 5)].map((e) => e.id).sort());
    } finally {
      await app.close(2000);
    }
  });

  it('gathers concurrent requests into shared writes (group commit) and answers each once stored', async () => {
    const app = await startSibling({}, { ingestFlushDelayMs: 10_000 });
    try {
      const tag = await preverifiedTag(server);
      const sibling = { ...server, url: app.url };
      const sent = Promise.all(Array.from({ length: 20 }, (_, i) => collect(sibling, tag.tagId, batch(`g${i}`, 3))));
      while (app.deps.eventQueue.pending < 60) await new Promise((r) => setTimeout(r, 5));
      await app.deps.eventQueue.drain();
      const responses = await sent;
      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(202));
      // 20 requests, one insert.
      expect(app.deps.eventQueue.stats).toEqual({ writes: 1, events: 60 });
      // Every 202 is readable at once.
      expect(await allEvents(server, tag.merchantId)).toHaveLength(60);
    } finally {
      await app.close(2000);
    }
  });

  it('fails only the request whose rows the database refuses, not the others written with it', async () => {
    // A real refusal by the database: a CHECK constraint on one event name (dropped afterwards).
    const poison = `Poison${randomUUID().slice(0, 8)}`;
    const db = server.app.deps.db;
    await db.execute(
      sql.raw(`alter table events add constraint ${poison.toLowerCase()} check (event_name <> '${poison}') not valid`),
    );
    // Held until all three requests are queued, then written together.
    const app = await startSibling({}, { ingestFlushDelayMs: 10_000 });
    try {
      const tag = await preverifiedTag(server);
      const sibling = { ...server, url: app.url };
      const sent = Promise.all([
        collect(sibling, tag.tagId, batch('ok1', 2)),
        collect(sibling, tag.tagId, [{ id: 'bad', event_name: poison }]),
        collect(sibling, tag.tagId, batch('ok2', 2)),
      ]);
      while (app.deps.eventQueue.pending < 5) await new Promise((r) => setTimeout(r, 5));
      await app.deps.eventQueue.drain();
      const [good1, bad, good2] = await sent;
      // Refused for its values (SQLSTATE 23514): the client's fault, a 400 (issue 30, finding 1).
      expect([good1.status, bad.status, good2.status]).toEqual([202, 400, 202]);
      expect(bad.body).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'Invalid request: events refused: a value breaks a constraint',
      });
      expect(bad.text).not.toContain(poison.toLowerCase());
      expect(await allEvents(server, tag.merchantId)).toHaveLength(4);
    } finally {
      await app.close(1000);
      await db.execute(sql.raw(`alter table events drop constraint ${poison.toLowerCase()}`));
    }
  });

  it('writes everything queued when the app closes, long before the batching delay, then refuses more', async () => {
    const app = await startSibling({}, { ingestFlushDelayMs: 10_000 });
    const tag = await preverifiedTag(server);
    const sibling = { ...server, url: app.url };
    const started = Date.now();
    const pending = Array.from({ length: 10 }, (_, i) => collect(sibling, tag.tagId, batch(`s${i}`, 4)));
    while (app.deps.eventQueue.pending < 40) await new Promise((r) => setTimeout(r, 5));
    // A short grace: idle keep-alive sockets are cut after it (every response is sent long before).
    const closed = app.close(1000);
    const responses = await Promise.all(pending);
    await closed;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(202));
    expect(await allEvents(server, tag.merchantId)).toHaveLength(40);
    await expect(app.deps.eventQueue.enqueue([])).rejects.toMatchObject({ reason: 'SERVICE_UNAVAILABLE' });
  });
});

// A real process on the real PostgreSQL (the PostgreSQL pass of the suite). On PGlite the same drain
// (app.close) is covered in-process above; a fresh on-disk PGlite per process costs 5-15 s here.
describe.skipIf(!process.env.TEST_DATABASE_URL)('SIGTERM (PostgreSQL pass only)', () => {
  // A failed assertion must not leave a server process behind.
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  it('loses nothing accepted: send, SIGTERM while events are queued, restart, every 202 event is there', async () => {
    const databaseUrl = process.env.TEST_DATABASE_URL!;
    const database = await openDatabase({ kind: 'postgres', url: databaseUrl, maxConnections: 2 });
    const partner = await onboardPartner(
      database.db,
      { name: 'Sigterm', domain: uniquePartnerDomain() },
      TEST_TARGET_HOST,
    );
    await database.close();

    const env = {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      TAG_TARGET_HOST: TEST_TARGET_HOST,
      COLLECT_RATE_LIMIT_PER_MINUTE: '0',
      DATABASE_URL: databaseUrl,
    };
    let proc = await startProcess(env);
    const target = { ...server, url: proc.url };
    const merchant = await api(target, partner.apiKey).post('/v1/partners/merchant', { name: 'M' });
    const tagRes = await api(target, partner.apiKey).post('/v1/partners/tag/generate', {
      merchantId: merchant.body.merchantId,
      domain: partner.domain,
    });
    const tagId = tagRes.body.tagId as string;

    const accepted: string[] = [];
    const send = async (prefix: string) => {
      const events = batch(`${prefix}-${randomUUID().slice(0, 8)}`, 10);
      try {
        const res = await collect(target, tagId, events);
        if (res.status === 202) accepted.push(...events.map((e) => e.id));
        return res.status;
      } catch {
        return 0; // connection refused: not accepted
      }
    };
    // Held in the queue: the batching delay (10 s) is far longer than this test waits.
    const queued = Array.from({ length: 30 }, (_, i) => send(`q${i}`));
    await new Promise((r) => setTimeout(r, 1500));
    const signalled = Date.now();
    proc.child.kill('SIGTERM');
    const late = Array.from({ length: 10 }, (_, i) => send(`late${i}`));
    const statuses = await Promise.all([...queued, ...late]);
    const code = await proc.exited;
    expect(code).toBe(0);
    // Shutdown wrote the queue at once instead of waiting out the delay, and answered what it held.
    expect(Date.now() - signalled).toBeLessThan(8_000);
    expect(accepted.length).toBeGreaterThan(0);
    for (const status of statuses) expect([0, 202, 503]).toContain(status);

    proc = await startProcess(env);
    try {
      const restarted = { ...server, url: proc.url, partner: { ...server.partner, apiKey: partner.apiKey } };
      const stored = (await allEvents(restarted, merchant.body.merchantId)).map((e: { id: string }) => e.id);
      expect(stored.length).toBe(accepted.length);
      expect(new Set(stored)).toEqual(new Set(accepted));
    } finally {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
  }, 180_000);
});

const children: ServerProcess[] = [];

/** A server process with exactly `env` (src/testing/server-process.ts). */
async function startProcess(env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  // The batching delay (10 s) is a test knob: held in the queue until SIGTERM writes it.
  const child = await spawnServer({ env, inheritEnv: false, knobs: { ingestFlushDelayMs: 10_000 } });
  children.push(child);
  return child;
}
