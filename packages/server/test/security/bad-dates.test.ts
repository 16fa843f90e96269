import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { logNames } from '../../src/runtime/event-log.js';
import type { EventInsertRow } from '../../src/runtime/event-queue.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { collectorHostOf, postEvents } from '../helpers/collector.js';
import { deleteLogStream, NATS_URL, natsAnswers, uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import { collect, type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';
import { parseMetrics } from '../helpers/prometheus.js';

/**
 * Issue 30, finding 1 (unauthenticated): one bad date stalled event storage for everyone.
 * `9999-12-31T23:59:00-23:59` passed the date parser and became year 10000, which PostgreSQL
 * refuses: in direct mode each such request answered 500 and split the shared group-commit batch;
 * in log mode the writer retried each such message for about 1.2 s, so 10 of them delayed a normal
 * event by 11.7 s. Now the one date parser (shared-schemas dates.ts) accepts only years 0001-9999
 * UTC, a request the database refuses for its values answers 400 while the rest of its batch is
 * stored, and the log writer terminates a refused message at once (counted in /metrics).
 */
const AUDIT_DATE = '9999-12-31T23:59:00-23:59';
/** What `Date.toISOString()` made of the audit's date: the form an older version put in the log. */
const YEAR_10000 = '+010000-01-01T23:58:00.000Z';

async function storedIds(server: TestServer, merchantId: string): Promise<string[]> {
  const result = await server.app.deps.db.execute(
    sql`select id from events where merchant_id = ${merchantId}::uuid order by id`,
  );
  return rowsOf(result).map((row) => String(row.id));
}

describe('direct mode: the schemas refuse the date, a refused request never fails its batch', () => {
  const suffix = randomBytes(4).toString('hex');
  // A trigger of this test makes the database refuse one event name as PostgreSQL refuses a bad
  // date (SQLSTATE 22008): what a value the schemas cannot catch would do to a shared batch.
  const REFUSED_NAME = `refused_${suffix}`;
  const fn = `bad_dates_refuse_${suffix}`;
  let server: TestServer;
  let tag: GeneratedTag;
  const lines: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      // A write starts once 5 events wait (and not before 10 s): the 5 requests below share one batch.
      env: { INGEST_BATCH_MAX: '5', LOG_LEVEL: 'warn' },
      knobs: { ingestFlushDelayMs: 10_000 },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    tag = await preverifiedTag(server);
    const db = server.app.deps.db;
    await db.execute(
      sql.raw(`create function ${fn}() returns trigger language plpgsql as $$
        begin
          if new.event_name = '${REFUSED_NAME}' then
            raise exception 'date/time field value out of range' using errcode = 'datetime_field_overflow';
          end if;
          return new;
        end $$`),
    );
    await db.execute(sql.raw(`create trigger ${fn} before insert on events for each row execute function ${fn}()`));
  }, 60_000);
  afterAll(async () => {
    await server?.app.deps.db.execute(sql.raw(`drop trigger if exists ${fn} on events`));
    await server?.app.deps.db.execute(sql.raw(`drop function if exists ${fn}()`));
    await server?.close();
  });

  it('/v1/collect, tRPC and the collector answer the audit’s date 400 VALIDATION_ERROR naming the window', async () => {
    const events = [{ event_name: 'PageView', event_time: AUDIT_DATE }];
    const rest = await collect(server, tag.tagId, events);
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({
      message:
        'Invalid request: events.0.event_time: event_time must fall within years 0001-9999 in UTC (after its offset is applied)',
      code: 'VALIDATION_ERROR',
    });
    const trpc = await api(server).post('/trpc/collect.ingest', { tagId: tag.tagId, events });
    expect(trpc.status).toBe(400);
    const host = await collectorHostOf(server, tag);
    const browser = await postEvents(server.url, host, { events });
    expect(browser.status).toBe(400);
    expect(browser.json).toEqual({ message: expect.stringContaining('years 0001-9999'), code: 'VALIDATION_ERROR' });
    // The window's own edges are stored as sent.
    const edges = [
      { id: `first-${suffix}`, event_name: 'PageView', event_time: '0001-01-01T00:00:00Z' },
      { id: `last-${suffix}`, event_name: 'PageView', event_time: '9999-12-31T23:59:00+23:59' },
    ];
    const stored = collect(server, tag.tagId, edges);
    const filler = Array.from({ length: 3 }, () => collect(server, tag.tagId, [{ event_name: 'PageView' }]));
    expect((await stored).status).toBe(202);
    for (const res of await Promise.all(filler)) expect(res.status).toBe(202);
    const times = rowsOf(
      await server.app.deps.db.execute(
        sql`select id, to_char(event_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as t from events
            where merchant_id = ${tag.merchantId}::uuid and id like ${`%-${suffix}`} order by id`,
      ),
    );
    expect(times).toEqual([
      { id: `first-${suffix}`, t: '0001-01-01T00:00:00' },
      { id: `last-${suffix}`, t: '9999-12-31T00:00:00' },
    ]);
  });

  it('the event list answers a filter past the window 400, and the whole window 200', async () => {
    const list = (query: string) =>
      api(server, server.partner.apiKey).get(`/v1/partners/events?merchantId=${tag.merchantId}&${query}`);
    for (const query of [`startDate=${encodeURIComponent(AUDIT_DATE)}`, `endDate=${encodeURIComponent(AUDIT_DATE)}`]) {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: expect.stringContaining('years 0001-9999'), code: 'VALIDATION_ERROR' });
    }
    const whole = await list('startDate=0001-01-01&endDate=9999-12-31');
    expect(whole.status).toBe(200);
    expect(whole.body.pagination.totalItems).toBe(5);
  });

  it('a batch with a refused request stores every other request; the refused one answers 400, logged on one line', async () => {
    const writes = server.app.deps.eventQueue.stats.writes;
    const good = Array.from({ length: 4 }, (_, i) => ({ id: `good-${i}-${suffix}`, event_name: 'PageView' }));
    const answers = await Promise.all([
      collect(server, tag.tagId, [good[0]!]),
      collect(server, tag.tagId, [good[1]!]),
      collect(server, tag.tagId, [{ id: `bad-${suffix}`, event_name: REFUSED_NAME }]),
      collect(server, tag.tagId, [good[2]!]),
      collect(server, tag.tagId, [good[3]!]),
    ]);
    // One group-commit batch carried all five requests.
    expect(server.app.deps.eventQueue.stats.writes - writes).toBe(1);
    expect(answers.map((res) => res.status)).toEqual([202, 202, 400, 202, 202]);
    expect(answers[2]!.body).toEqual({
      message: 'Invalid request: events refused: a date-time is out of range (years 0001-9999 UTC)',
      code: 'VALIDATION_ERROR',
    });
    const ids = await storedIds(server, tag.merchantId);
    for (const event of good) expect(ids).toContain(event.id);
    expect(ids).not.toContain(`bad-${suffix}`);
    const refusedLines = lines.filter((line) => line.includes('refused by the database'));
    expect(refusedLines).toHaveLength(1);
    expect(refusedLines[0]).not.toContain('stack');
    expect(lines.filter((line) => line.includes('"level":50') || line.includes('"stack"'))).toEqual([]);
  });
});

const natsAvailable = await natsAnswers();
if (!natsAvailable) console.warn(`bad-dates log-mode tests skipped: NATS does not answer at ${NATS_URL}`);

describe.skipIf(!natsAvailable)('log mode: a message the database refuses is terminated at once', () => {
  const TOKEN = 'metrics-token-bad-dates-0123';
  const prefix = uniqueLogPrefix();
  let server: TestServer;
  let tag: GeneratedTag;
  const lines: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      env: { EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix, ROLE: 'all', METRICS_TOKEN: TOKEN, LOG_LEVEL: 'warn' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    tag = await preverifiedTag(server);
  }, 60_000);
  // Separate hooks: the stream is deleted even when closing the server fails.
  afterAll(async () => {
    if (natsAvailable) await deleteLogStream(prefix);
  });
  afterAll(async () => {
    await server?.close();
  });

  const scrape = async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return parseMetrics(await res.text());
  };
  const rejected = async () => (await scrape()).value('partner_tags_event_log_rejected_total', { reason: 'datetime' });

  /** Publishes messages straight into the stream, past the schemas, as an older version wrote them. */
  async function inject(count: number): Promise<string[]> {
    const nc = await connect({ servers: NATS_URL, timeout: 2_000 });
    const ids: string[] = [];
    try {
      const js = jetstream(nc);
      for (let i = 0; i < count; i++) {
        const row: EventInsertRow = {
          merchantId: tag.merchantId,
          tagId: tag.tagId,
          id: randomUUID(),
          muid: 'muid-bad-dates',
          eventName: 'PageView',
          eventTime: YEAR_10000,
          rawData: '{}',
        };
        ids.push(row.id);
        await js.publish(`${logNames(prefix).subjectRoot}.${tag.merchantId}`, JSON.stringify({ rows: [row] }));
      }
    } finally {
      await nc.close();
    }
    return ids;
  }

  it('the collector answers the audit’s date 400 before publishing anything', async () => {
    const res = await collect(server, tag.tagId, [{ event_name: 'PageView', event_time: AUDIT_DATE }]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('a refused message is terminated without a retry, counted in /metrics and logged on one line', async () => {
    const before = await rejected();
    const retries = server.app.writers.reduce((n, w) => n + w.stats.retries, 0);
    const started = Date.now();
    const [id] = await inject(1);
    await waitFor(async () => (await rejected()) > before, 10_000, 'the refused message to be counted');
    const tookMs = Date.now() - started;
    expect(await rejected()).toBe(before + 1);
    expect(server.app.writers.reduce((n, w) => n + w.stats.retries, 0)).toBe(retries);
    // Well under one backoff round of the old retries (about 1.2 s).
    expect(tookMs).toBeLessThan(1_000);
    expect(await storedIds(server, tag.merchantId)).not.toContain(id);
    const refused = lines.filter((line) => line.includes('refused by the database'));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain('"sqlstate":"22');
    expect(refused[0]).not.toContain('stack');
    // Terminated: JetStream soon holds nothing of it for redelivery.
    const drained = async () => {
      const lag = await scrape();
      return (
        lag.value('partner_tags_event_log_pending_messages', { state: 'ack_pending' }) === 0 &&
        lag.value('partner_tags_event_log_pending_messages', { state: 'pending' }) === 0
      );
    };
    await waitFor(drained, 5_000, 'nothing pending in the log');
  });

  it('a good event behind 10 refused messages is stored quickly (the audit: 11.7 s)', async () => {
    const before = await rejected();
    await inject(10);
    const good = { id: randomUUID(), event_name: 'Purchase' };
    const sent = Date.now();
    expect((await collect(server, tag.tagId, [good])).status).toBe(202);
    await waitFor(async () => (await storedIds(server, tag.merchantId)).includes(good.id), 20_000, 'the good event');
    const delayMs = Date.now() - sent;
    console.info(`bad-dates: good event stored ${delayMs} ms after its 202, behind 10 refused messages`);
    expect(delayMs).toBeLessThan(2_000);
    await waitFor(async () => (await rejected()) >= before + 10, 10_000, 'the 10 refused messages to be counted');
    expect(await rejected()).toBe(before + 10);
  });
});

describe('the partner CLI: a key overlap that ends past year 9999', () => {
  it('is a usage error before the database is opened (it was a timestamptz the database refuses)', async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const args = ['--import', 'tsx', 'src/cli/main.ts', 'rotate-key', randomUUID(), '--expire-old-in', '3000000d'];
      // A database nobody answers at: the command must not need one to refuse the duration.
      const env = { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none', LOG_LEVEL: 'silent' };
      execFile(process.execPath, args, { env, timeout: 60_000 }, (error, _stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr });
      });
    });
    expect(stderr).toContain('--expire-old-in must end before year 10000.');
    expect(code).toBe(2);
  }, 60_000);
});
