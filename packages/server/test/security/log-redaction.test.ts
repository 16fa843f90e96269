import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';

/**
 * Finding 5 (logs) of the security round: a request the database refused wrote its whole payload
 * to the error log (a 969 KB request: 7.7 MB of log), through the failed statement's parameters.
 * Logs carry ids and sizes only: no request payload, no query string. The database is made to
 * refuse one distinctive event name (a trigger of this test), every way in is tried, and the
 * server's log lines (at debug level) are searched for the payload and the query strings.
 */
const suffix = randomBytes(4).toString('hex');
const PAYLOAD_CANARY = `payload-canary-${suffix}`;
const QUERY_CANARY = `query-canary-${suffix}`;
const REFUSED_NAME = `refused_${suffix}`;
const fn = `sec5_refuse_${suffix}`;

let server: TestServer;
let tag: GeneratedTag;
const lines: string[] = [];

beforeAll(async () => {
  server = await startTestServer({
    env: { LOG_LEVEL: 'debug' },
    logDestination: { write: (line: string) => void lines.push(line) },
  });
  tag = await preverifiedTag(server);
  const db = server.app.deps.db;
  await db.execute(
    sql.raw(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.event_name = '${REFUSED_NAME}' then raise exception 'refused by the test trigger'; end if;
        return new;
      end $$`),
  );
  await db.execute(sql.raw(`create trigger ${fn} before insert on events for each row execute function ${fn}()`));
});
afterAll(async () => {
  await server?.app.deps.db.execute(sql.raw(`drop trigger if exists ${fn} on events`));
  await server?.app.deps.db.execute(sql.raw(`drop function if exists ${fn}()`));
  await server?.close();
});

const refusedEvent = (i: number) => ({
  id: `${PAYLOAD_CANARY}-id-${i}`,
  event_name: REFUSED_NAME,
  muid: `${PAYLOAD_CANARY}-muid`,
  data: { note: `${PAYLOAD_CANARY} `.repeat(200), nested: { [`${PAYLOAD_CANARY}-key`]: i } },
});

describe('finding 5: logs carry ids and sizes, never payloads or query strings', () => {
  it('a batch the database refuses is logged without its payload, on REST and tRPC', async () => {
    const rest = await api(server).post('/v1/collect', {
      tagId: tag.tagId,
      events: [refusedEvent(1), refusedEvent(2)],
    });
    expect(rest.status).toBeGreaterThanOrEqual(500);
    const trpc = await api(server).post('/trpc/collect.ingest', { tagId: tag.tagId, events: [refusedEvent(3)] });
    expect(trpc.status).toBeGreaterThanOrEqual(500);
    // Neither answer leaks it either.
    expect(rest.text).not.toContain(PAYLOAD_CANARY);
    expect(trpc.text).not.toContain(PAYLOAD_CANARY);

    const log = lines.join('');
    // The failure was logged (the test can fail: without the log line there is nothing to check)...
    const failures = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'storing events failed');
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]).toMatchObject({
      events: 2,
      err: { message: 'Failed query', query: { parameters: expect.any(Number) } },
    });
    expect(failures[0].err.query.bytes).toBeGreaterThan(PAYLOAD_CANARY.length * 200);
    // ...with its sizes, and without any of the payload.
    expect(log).not.toContain(PAYLOAD_CANARY);
    expect(log).toContain('refused by the test trigger');
  });

  it('query strings stay out of the access log (REST, tRPC input, unrouted paths)', async () => {
    const partner = api(server, server.partner.apiKey);
    await partner.get(`/v1/partners/events?merchantId=${tag.merchantId}&events=${QUERY_CANARY}`);
    await partner.get(`/trpc/merchant.list?input=${encodeURIComponent(JSON.stringify({ search: QUERY_CANARY }))}`);
    await api(server).get(`/nowhere?token=${QUERY_CANARY}#${QUERY_CANARY}`);
    await partner.get(`/v1/partners/events/export?merchantId=${tag.merchantId}&events=${QUERY_CANARY}`);
    const log = lines.join('');
    expect(log).toContain('/v1/partners/events');
    expect(log).not.toContain(QUERY_CANARY);
  });
});
