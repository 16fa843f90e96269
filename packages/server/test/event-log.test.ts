// Log mode (EVENT_LOG_URL): the collectors publish to NATS JetStream and answer 202 once the log
// acknowledged; a writer in the same process drains into the database. Needs the machine's NATS.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../src/db/read-rows.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';
import { deleteLogStream, NATS_URL, natsAnswers, uniqueLogPrefix, waitFor } from './helpers/event-log.js';
import { collect, listedTag, preverifiedTag, verifiedTag } from './helpers/fixtures.js';

const available = await natsAnswers();
if (!available) console.warn(`event-log tests skipped: NATS does not answer at ${NATS_URL}`);
const prefix = uniqueLogPrefix();
let server: TestServer;

beforeAll(async () => {
  if (!available) return;
  server = await startTestServer({ env: { EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix } });
}, 60_000);
// Separate hooks: the stream is deleted even when closing the server fails (afterAll hooks run last-first).
afterAll(async () => {
  if (available) await deleteLogStream(prefix);
});
afterAll(async () => {
  await server?.close();
});

async function storedIds(merchantId: string): Promise<string[]> {
  const rows = rowsOf(
    await server.app.database.db.execute(
      sql`select id from events where merchant_id = ${merchantId}::uuid order by seq`,
    ),
  );
  return rows.map((r) => String(r.id));
}

describe.skipIf(!available)('log mode', () => {
  it('answers 202 once the log has the events; the writer stores them in array order, once', async () => {
    const tag = await preverifiedTag(server);
    const ids = Array.from({ length: 20 }, () => randomUUID());
    const events = ids.map((id) => ({ id, event_name: 'PageView', data: { n: id } }));
    const first = await collect(server, tag.tagId, events);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ accepted: 20 });
    // The same request again (a retry): JetStream de-duplicates it, and storage would anyway.
    expect((await collect(server, tag.tagId, events)).status).toBe(202);
    await waitFor(async () => (await storedIds(tag.merchantId)).length >= 20, 10_000, 'the writer');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await storedIds(tag.merchantId)).toEqual(ids);
  });

  it('moves the tag lifecycle as direct mode does: first event -> active, first/last event times', async () => {
    const tag = await verifiedTag(server);
    expect((await listedTag(server, tag)).status).toBe('waiting_for_events');
    expect((await collect(server, tag.tagId, [{ event_name: 'PageView' }])).status).toBe(202);
    await waitFor(async () => (await listedTag(server, tag)).status === 'active', 10_000, 'the tag to become active');
    const [row] = rowsOf(
      await server.app.database.db.execute(
        sql`select first_event_at is not null as first, last_event_at is not null as last from tags where id = ${tag.tagId}::uuid`,
      ),
    );
    expect(row).toEqual({ first: true, last: true });
  });

  it('still validates before publishing: 400 for a bad body, 404 for an unknown tag', async () => {
    expect((await collect(server, randomUUID(), [{ event_name: 'PageView' }])).status).toBe(404);
    const tag = await preverifiedTag(server);
    expect((await collect(server, tag.tagId, [])).status).toBe(400);
  });

  it('/readyz reports the database and the log separately', async () => {
    const ready = await api(server).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'up', log: 'up' } });
  });
});
