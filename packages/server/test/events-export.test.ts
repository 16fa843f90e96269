import http from 'node:http';
import zlib from 'node:zlib';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COPY_BATCH } from '../src/features/events/read/export-events.js';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';
import { collectOk, type GeneratedTag, listEvents, preverifiedTag } from './helpers/fixtures.js';

// GET /v1/partners/events/export: NDJSON of exactly the list's JSON per event, a final summary
// line, gzip, resumable after a cut, on both databases.
let server: TestServer;
let tag: GeneratedTag;
// 100k on PostgreSQL; 20k on the in-process PGlite (WebAssembly, several times slower per row).
const BULK = process.env.TEST_DATABASE_URL ? 100_000 : 20_000;
const TRICKY = [
  {
    id: 'tricky-1',
    event_name: 'Purchase',
    muid: 'm"q\\uote',
    data: { s: 'line\nbreak\ttab "quoted" \\ back', u: 'é€😀' },
  },
  { id: 'tricky-2', event_name: 'Ünïcode Name', data: { ctl: '\u0001\u001f\u007f', empty: '' } },
  { id: 'tricky-3"x', event_name: 'PageView', data: [1, 2.5, null, true] },
  // Quotes, backslashes and placeholders: COPY takes no parameters, so values are inlined as literals.
  { id: "tricky-4 it's \\' $1 E'x", event_name: "O'Brien\\$2", data: { q: "'; select 1; --" } },
];

beforeAll(async () => {
  server = await startTestServer();
  tag = await preverifiedTag(server);
  await collectOk(
    server,
    tag.tagId,
    TRICKY.map((e) => ({ ...e, event_time: '2026-01-05T00:00:00.000Z' })),
  );
  // 100k events written in one statement (seq given, so no per-row numbering), then the tricky ones.
  // In statements of 10k (each well inside the statement deadline).
  for (let from = 1; from <= BULK; from += 10_000) {
    await server.app.database.db.execute(sql`
      insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
      select ${tag.merchantId}::uuid, 'bulk-' || g, ${tag.tagId}::uuid, 'u' || (g % 97),
        (array['PageView', 'Purchase', 'Search'])[1 + g % 3],
        timestamptz '2026-01-01T00:00:00Z' + (g % 20000) * interval '1 minute',
        '{"g":' || g || '}', 1000 + g
      from generate_series(${from}::int, ${Math.min(BULK, from + 9_999)}::int) g`);
    // Their ids, as ingestion records them (migration 0028): `afterId` finds an event through them.
    await server.app.database.db.execute(sql`
      insert into event_ids (merchant_id, id, event_time)
      select ${tag.merchantId}::uuid, 'bulk-' || g, timestamptz '2026-01-01T00:00:00Z' + (g % 20000) * interval '1 minute'
      from generate_series(${from}::int, ${Math.min(BULK, from + 9_999)}::int) g`);
  }
  // The bulk insert held the event loop (PGlite runs in this process): idle keep-alive sockets
  // may have been closed meanwhile, so no test starts on one of them.
  await fetch(`${server.url}/healthz`, { headers: { connection: 'close' } }).catch(() => {});
}, 120_000);
afterAll(() => server?.close());

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function get(path: string, headers: Record<string, string> = {}, key = server.partner.apiKey): Promise<Raw> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const exportPath = (query: Record<string, string> = {}) =>
  `/v1/partners/events/export?${new URLSearchParams({ merchantId: tag.merchantId, ...query })}`;

function lines(body: Buffer | string): string[] {
  const text = body.toString();
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
}

/**
 * Every event of the list as its JSON text, walked by cursor with limit 100 through the tRPC caller
 * (the same procedure and output as REST, without 1,000 HTTP round trips).
 */
async function listed(query: Record<string, string>): Promise<string[]> {
  const caller = server.caller(server.partner.apiKey);
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<typeof caller.events.list>> = await caller.events.list({
      merchantId: tag.merchantId,
      ...query,
      limit: 100,
      ...(cursor ? { cursor } : {}),
    } as Parameters<typeof caller.events.list>[0]);
    for (const event of page.events) out.push(JSON.stringify(event));
    cursor = page.pagination.nextCursor;
  } while (cursor);
  return out;
}

/** Row by row: the first difference is reported, not a diff of 100k lines. */
function expectSameLines(actual: string[], expected: string[], what = ''): void {
  const first = actual.findIndex((line, i) => line !== expected[i]);
  expect(first === -1 ? null : { line: first, actual: actual[first], expected: expected[first] }, what).toBeNull();
  expect(actual.length, what).toBe(expected.length);
}

describe('GET /v1/partners/events/export', () => {
  it('exports every event, line by line exactly the list’s JSON, then the summary', { timeout: 120_000 }, async () => {
    const res = await get(exportPath({ sortOrder: 'asc' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['content-encoding']).toBeUndefined();
    const all = lines(res.body);
    const summary = JSON.parse(all.pop() as string);
    expect(summary).toEqual({ complete: true, count: BULK + TRICKY.length, cursor: expect.any(String) });
    expectSameLines(all, await listed({ sortOrder: 'asc' }));
    for (const tricky of TRICKY) {
      const line = all.find((l) => JSON.parse(l).id === tricky.id) as string;
      expect(JSON.parse(JSON.parse(line).raw_data)).toEqual(tricky.data);
    }
  });

  it('applies the list’s filters and sorts', async () => {
    for (const query of <Record<string, string>[]>[
      { events: 'Purchase,Ünïcode Name', startDate: '2026-01-05', endDate: '2026-01-05T12:00:00Z' },
      { events: 'Search', sortBy: 'event_name', sortOrder: 'desc', endDate: '2026-01-02' },
      { sortBy: 'event_name', startDate: '2026-01-13T01:00:00Z' },
      { events: "O'Brien\\$2,Purchase", endDate: '2026-01-05' },
    ]) {
      const res = await get(exportPath(query));
      const all = lines(res.body);
      const summary = JSON.parse(all.pop() as string);
      expect(summary.count).toBe(all.length);
      expect(all.length).toBeGreaterThan(0);
      expectSameLines(all, await listed(query), JSON.stringify(query));
    }
  });

  it('resumes a cut download with afterId to the same events and total', { timeout: 60_000 }, async () => {
    const full = lines((await get(exportPath())).body);
    const total = JSON.parse(full.pop() as string).count as number;
    // Read about a third of the body, then cut the connection.
    const partial = await new Promise<string>((resolve, reject) => {
      let text = '';
      const req = http.get(
        `${server.url}${exportPath()}`,
        { headers: { authorization: `Bearer ${server.partner.apiKey}` }, agent: false },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
            if (text.length > BULK * 40) {
              req.destroy();
              resolve(text);
            }
          });
          res.on('end', () => reject(new Error('the export ended before the cut')));
        },
      );
      req.on('error', () => {});
    });
    const received = partial.split('\n').slice(0, -1); // the last piece may be a partial line
    expect(received.length).toBeGreaterThan(BULK / 10);
    expect(received.length).toBeLessThan(total);
    const lastId = JSON.parse(received[received.length - 1] as string).id as string;
    const rest = lines((await get(exportPath({ afterId: lastId }))).body);
    const summary = JSON.parse(rest.pop() as string);
    expect(summary.complete).toBe(true);
    expect(received.length + summary.count).toBe(total);
    expectSameLines([...received, ...rest], full);
  });

  it('resumes after an event whose id holds quotes, backslashes and a placeholder', async () => {
    const query = { sortOrder: 'asc', endDate: '2026-01-05T23:59:59Z' };
    const full = lines((await get(exportPath(query))).body);
    full.pop();
    const at = full.findIndex((line) => JSON.parse(line).id === TRICKY[3]?.id);
    expect(at).toBeGreaterThan(0);
    const rest = lines((await get(exportPath({ ...query, afterId: TRICKY[3]?.id as string }))).body);
    expect(JSON.parse(rest.pop() as string)).toMatchObject({ complete: true, count: full.length - at - 1 });
    expectSameLines(rest, full.slice(at + 1));
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'a reader that stops reading stops the reads: batches wait for the socket',
    { timeout: 60_000 },
    async () => {
      // Each batch is one COPY statement: count them while the reader holds the stream paused.
      const db = server.app.deps.db as unknown as { $client: { unsafe: (...args: unknown[]) => unknown } };
      const original = db.$client.unsafe;
      let copies = 0;
      db.$client.unsafe = (...args: unknown[]) => {
        if (typeof args[0] === 'string' && args[0].startsWith('copy (')) copies++;
        return original.apply(db.$client, args);
      };
      try {
        let release = () => {};
        const stalled = new Promise<void>((resolve) => {
          release = resolve;
        });
        let received = 0;
        const done = new Promise<string>((resolve, reject) => {
          const headers = { authorization: `Bearer ${server.partner.apiKey}`, 'accept-encoding': 'identity' };
          const req = http.get(`${server.url}${exportPath({ sortOrder: 'asc' })}`, { headers, agent: false }, (res) => {
            let tail = '';
            res.once('data', () => {
              res.pause();
              stalled.then(() => res.resume());
            });
            res.on('data', (chunk: Buffer) => {
              received += chunk.length;
              tail = (tail + chunk.toString()).slice(-300);
            });
            res.on('end', () => resolve(tail));
            res.on('error', reject);
          });
          req.on('error', reject);
        });
        // The socket buffers take a few batches before the server has to wait: on a busy machine
        // that takes a while. Wait until no batch was read for 1.5 s (at most 15 s)...
        const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        let seen = copies;
        let quietSince = performance.now();
        const started = performance.now();
        while (performance.now() - quietSince < 1_500 && performance.now() - started < 15_000) {
          await sleep(100);
          if (copies !== seen) {
            seen = copies;
            quietSince = performance.now();
          }
        }
        const whilePaused = copies;
        // ...then stalled: none read in a further second, far fewer read than the export has.
        await sleep(1_000);
        expect(copies).toBe(whilePaused);
        const total = Math.ceil((BULK + TRICKY.length) / COPY_BATCH);
        expect(whilePaused).toBeLessThan(total / 2);
        release();
        const tail = await done;
        expect(JSON.parse(tail.trimEnd().split('\n').pop() as string)).toMatchObject({
          complete: true,
          count: BULK + TRICKY.length,
        });
        expect(copies).toBeGreaterThanOrEqual(total);
        expect(received).toBeGreaterThan(BULK * 50);
      } finally {
        db.$client.unsafe = original;
      }
    },
  );

  it('sends gzip when accepted, the same lines', async () => {
    const query = { events: 'Purchase', endDate: '2026-01-03' };
    const plain = await get(exportPath(query), { 'accept-encoding': 'identity' });
    const zipped = await get(exportPath(query), { 'accept-encoding': 'br;q=1, gzip;q=0.5' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(zipped.body).toString()).toBe(plain.body.toString());
    const refused = await get(exportPath(query), { 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('continues from the final cursor: nothing new, then only what was added after it', async () => {
    const first = lines((await get(exportPath({ sortOrder: 'asc' }))).body);
    const { cursor } = JSON.parse(first.pop() as string);
    const none = lines((await get(exportPath({ sortOrder: 'asc', cursor }))).body);
    expect(none).toHaveLength(1);
    expect(JSON.parse(none[0] as string)).toMatchObject({ complete: true, count: 0, cursor });
    await collectOk(server, tag.tagId, [{ id: 'later-1', event_name: 'PageView', event_time: '2027-01-01T00:00:00Z' }]);
    const later = lines((await get(exportPath({ sortOrder: 'asc', cursor }))).body);
    expect(later.map((l) => JSON.parse(l).id)).toEqual(['later-1', undefined]);
  });

  it('answers failures before the first line as JSON { message, code }', async () => {
    const other = await server.createPartner();
    const cases: [Raw, number, string][] = [
      [await get(exportPath(), {}, 'mp_live_not-a-key'), 401, 'UNAUTHORIZED'],
      [await get(exportPath(), {}, other.apiKey), 404, 'MERCHANT_NOT_FOUND'],
      [await get(exportPath({ cursor: 'nope.nope' })), 400, 'VALIDATION_ERROR'],
      [await get(exportPath({ afterId: 'no-such-event' })), 400, 'VALIDATION_ERROR'],
      [await get(exportPath({ sortBy: 'muid' })), 400, 'VALIDATION_ERROR'],
      [await get(`/v1/partners/events/export?merchantId=not-a-uuid`), 400, 'VALIDATION_ERROR'],
    ];
    for (const [res, status, code] of cases) {
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(JSON.parse(res.body.toString())).toMatchObject({ code });
    }
    // A cursor of another list (the list's own cursor with other filters) is refused.
    const page = await listEvents(server, tag.merchantId, { limit: 1 });
    const foreign = await get(exportPath({ events: 'Purchase', cursor: page.body.pagination.nextCursor }));
    expect(foreign.status).toBe(400);
    const post = await api(server, server.partner.apiKey).post(exportPath(), {});
    expect(post.status).toBe(405);
  });
});
