// Log mode: a deleted merchant's events still in NATS when the writer drains them are never stored.
// Needs the machine's NATS.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { deleteLogStream, logBacklog, NATS_URL, natsAnswers, uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import { collect, preverifiedTag } from '../helpers/fixtures.js';

const available = await natsAnswers();
if (!available) console.warn(`log-mode deletion test skipped: NATS does not answer at ${NATS_URL}`);
const prefix = uniqueLogPrefix();
let server: TestServer;
let writer: RunningApp | undefined;

// The API process publishes and writes nothing; a writer starts after the DELETE. A long statement
// deadline keeps the purge (its grace) away, so only the writer can keep the events out.
const ENV = { EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix, DB_STATEMENT_TIMEOUT: '60000' };

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

const stored = async (merchantId: string) =>
  rowsOf<{ n: number }>(
    await server.app.deps.db.execute(
      sql`select count(*)::int as n from events where merchant_id = ${merchantId}::uuid`,
    ),
  )[0]?.n ?? 0;

describe.skipIf(!available)('log mode and deletion', () => {
  it("drops the deleted merchant's events when drained, stores the others'", async () => {
    const deleted = await preverifiedTag(server);
    const kept = await preverifiedTag(server);
    for (const [name, tag] of [
      ['d', deleted],
      ['k', kept],
    ] as const) {
      const events = Array.from({ length: 10 }, (_, i) => ({ id: `${name}${i}`, event_name: 'PageView' }));
      expect((await collect(server, tag.tagId, events)).status).toBe(202);
    }
    expect(await logBacklog(prefix)).toBe(2);
    const res = await api(server, server.partner.apiKey).request(
      'DELETE',
      `/v1/partners/merchant/${deleted.merchantId}`,
    );
    expect(res.status).toBe(202);

    writer = await startApp(
      { ...server.app.deps.env, ...{ ROLE: 'writer' as const }, PORT: 0 },
      { database: server.app.database },
    );
    await waitFor(async () => (await stored(kept.merchantId)) === 10, 15_000, 'the writer');
    await waitFor(() => (writer?.writers[0]?.stats.messages ?? 0) >= 2, 5_000, 'both messages');
    expect(await stored(deleted.merchantId)).toBe(0);
    expect(writer.writers.reduce((n, w) => n + w.stats.dropped, 0)).toBe(10);
    expect(await logBacklog(prefix)).toBe(0);
  }, 60_000);
});
