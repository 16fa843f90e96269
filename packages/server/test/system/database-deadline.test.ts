import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { generateTag } from '../helpers/fixtures.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  startTcpProxy,
  type TcpProxy,
  viaPort,
} from '../helpers/hardening.js';

/** statement_timeout of this test's server; the client deadline is this + 500 ms (db/deadline.ts). */
const STATEMENT_TIMEOUT_MS = 1000;
const DEADLINE_MS = STATEMENT_TIMEOUT_MS + 500;
/** The bound: a request whose database goes silent answers within the deadline plus 1 s. */
const ANSWER_BOUND_MS = DEADLINE_MS + 1000;

interface Timed {
  status: number;
  body: unknown;
  retryAfter: string | null;
  ms: number;
}

async function timed(url: string, init?: RequestInit): Promise<Timed> {
  const started = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, retryAfter: res.headers.get('retry-after'), ms: performance.now() - started };
}

const unavailable = { message: expect.any(String), code: 'SERVICE_UNAVAILABLE' };

describe('database black-holed mid-request (the proxy stops forwarding without closing)', async () => {
  const available = await postgresAnswers();
  let scratch: ScratchDatabase;
  let proxy: TcpProxy;
  let server: TestServer;
  const auth = () => ({ authorization: `Bearer ${server.partner.apiKey}`, 'content-type': 'application/json' });

  beforeAll(async () => {
    if (!available) return;
    scratch = await createScratchDatabase('h_ops_deadline');
    proxy = await startTcpProxy(Number(new URL(scratch.url).port || 5432));
    server = await startTestServer({
      databaseUrl: viaPort(scratch.url, proxy.port),
      env: { DB_STATEMENT_TIMEOUT: String(STATEMENT_TIMEOUT_MS) },
    });
  }, 60_000);
  afterAll(async () => {
    await proxy?.setMode('forward');
    await server?.close();
    await proxy?.close();
    await scratch?.drop();
  });

  it.skipIf(!available)('PostgreSQL cancels a statement at statement_timeout: 503 + Retry-After', async () => {
    // pg_sleep in a read: PostgreSQL itself cancels it (57014), the statement surely did not apply.
    const { sql } = await import('drizzle-orm');
    const started = performance.now();
    const error = await server.app.deps.db.execute(sql`select pg_sleep(5)`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(performance.now() - started).toBeLessThan(ANSWER_BOUND_MS);
    const { toAppError } = await import('../../src/kernel/errors.js');
    const appError = toAppError(error);
    expect(appError.reason).toBe('DATABASE_UNAVAILABLE');
    expect(appError.headers).toEqual({ 'retry-after': '2' });
  });

  it.skipIf(!available)(
    'answers within the deadline + 1 s: reads, collector, idempotent writes 503 + Retry-After; a plain write DATABASE_ERROR; /readyz 503; then recovers',
    async () => {
      const tag = await generateTag(server, { domain: `shop-${randomUUID().slice(0, 8)}.${server.partner.domain}` });
      expect(tag.status).toBe('active');
      const list = () => timed(`${server.url}/v1/partners/merchant`, { headers: auth() });
      const events = () => timed(`${server.url}/v1/partners/events?merchantId=${tag.merchantId}`, { headers: auth() });
      const collect = () =>
        timed(`${server.url}/v1/collect`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ tagId: tag.tagId, events: [{ id: randomUUID(), event_name: 'PageView' }] }),
        });
      const create = (idempotencyKey?: string) =>
        timed(`${server.url}/v1/partners/merchant`, {
          method: 'POST',
          headers: { ...auth(), ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
          body: JSON.stringify({ name: 'During a partition' }),
        });
      // Warm: every path has live pooled connections (the ones about to go silent).
      expect((await list()).status).toBe(200);
      expect((await events()).status).toBe(200);
      expect((await collect()).status).toBe(202);
      expect((await create()).status).toBe(201);

      await proxy.setMode('blackhole');
      const [reads, eventReads, collected, idempotent, plain, ready] = await Promise.all([
        Promise.all([list(), list()]),
        Promise.all([events(), events()]),
        Promise.all([collect(), collect()]),
        Promise.all([create(randomUUID()), create(randomUUID())]),
        Promise.all([create(), create()]),
        timed(`${server.url}/readyz`),
      ]);
      for (const r of [...reads, ...eventReads, ...collected, ...idempotent]) {
        expect(r.status).toBe(503);
        expect(r.body).toEqual(unavailable);
        expect(r.retryAfter).toBe('2');
        expect(r.ms).toBeLessThan(ANSWER_BOUND_MS);
      }
      for (const r of plain) {
        // The insert was sent on a connection that went silent: it may or may not have happened.
        // A 503 only when it provably did not (it never left the pool).
        expect(r.ms).toBeLessThan(ANSWER_BOUND_MS);
        if (r.status === 503) expect(r.body).toEqual(unavailable);
        else expect(r).toMatchObject({ status: 500, body: { code: 'DATABASE_ERROR' } });
      }
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect((await timed(`${server.url}/healthz`)).status).toBe(200);

      // Still silent: new connections hang at their start-up too; still answered in time.
      const again = await Promise.all([list(), collect(), create()]);
      for (const r of again) {
        expect(r.ms).toBeLessThan(ANSWER_BOUND_MS);
        expect(r.status).toBeGreaterThanOrEqual(500);
      }

      // The partition heals: the same process serves again.
      await proxy.setMode('forward');
      const healed = performance.now();
      let status = 0;
      while (performance.now() - healed < 15_000) {
        status = (await list()).status;
        if (status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(200);
      expect((await collect()).status).toBe(202);
      expect((await create()).status).toBe(201);
      expect((await timed(`${server.url}/readyz`)).status).toBe(200);
    },
    60_000,
  );
});
