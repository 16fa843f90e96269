// Log mode: a visitor's events still in NATS when their erasure completes are dropped when drained
// later (the erasure keeps suppressing them for EVENT_LOG_MAX_AGE_SECONDS). Needs the machine's NATS.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { deleteLogStream, logBacklog, NATS_URL, natsAnswers, uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import { collect, preverifiedTag } from '../helpers/fixtures.js';

const available = await natsAnswers();
if (!available) console.warn(`log-mode erasure test skipped: NATS does not answer at ${NATS_URL}`);
const prefix = uniqueLogPrefix();
let server: TestServer;
let writer: RunningApp | undefined;

// The API process publishes and writes nothing (its erasure job runs); a writer starts only after
// the erasure completed. A short statement deadline keeps the erasure's grace short.
const ENV = { EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix, DB_STATEMENT_TIMEOUT: '1000' };

beforeAll(async () => {
  if (!available) return;
  server = await startTestServer({ env: { ...ENV, ROLE: 'api' } });
}, 60_000);
afterAll(async () => {
  if (available) await deleteLogStream(prefix);
});
afterAll(async () => {
  await writer?.close(2000);
  await server?.close();
});

const stored = async (merchantId: string, muid: string) =>
  rowsOf<{ n: number }>(
    await server.app.deps.db.execute(
      sql`select count(*)::int as n from events where merchant_id = ${merchantId}::uuid and muid = ${muid}`,
    ),
  )[0]?.n ?? 0;

describe.skipIf(!available)('log mode and visitor erasure', () => {
  it("drops the erased visitor's events drained after the erasure completed, stores the others'", async () => {
    const tag = await preverifiedTag(server);
    const events = ['erased', 'kept'].flatMap((muid) =>
      Array.from({ length: 5 }, (_, i) => ({ id: `${muid}${i}`, muid, event_name: 'PageView' })),
    );
    expect((await collect(server, tag.tagId, events)).status).toBe(202);
    expect(await logBacklog(prefix)).toBe(1);
    const client = api(server, server.partner.apiKey);
    const created = await client.post('/v1/partners/erasures', { muid: 'erased', merchantId: tag.merchantId });
    expect(created.status).toBe(202);
    await waitFor(
      async () => (await client.get(`/v1/partners/erasures/${created.body.id}`)).body.status === 'completed',
      20_000,
      'the erasure',
    );

    writer = await startApp(
      { ...server.app.deps.env, ...{ ROLE: 'writer' as const }, PORT: 0 },
      { database: server.app.database },
    );
    await waitFor(async () => (await stored(tag.merchantId, 'kept')) === 5, 15_000, 'the writer');
    expect(await stored(tag.merchantId, 'erased')).toBe(0);
    // The writer acknowledges a batch after its commit: the rows can be visible a moment before.
    await waitFor(async () => (await logBacklog(prefix)) === 0, 5_000, 'the acknowledgement');
  }, 60_000);
});
