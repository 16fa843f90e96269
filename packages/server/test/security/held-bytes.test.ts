import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { STALL_MS } from '../../src/runtime/held-bytes.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';
import { insertBigEvents, lastLine, sleep, stalledGet, until } from '../helpers/slow-readers.js';
import { SseClient } from '../helpers/sse.js';

/**
 * Issue 30, finding 2 (and 3's memory): what the server holds for a reader that does not read is
 * counted in bytes, per stream (STREAM_BUFFER_BYTES) and for the whole process (HELD_BYTES, streams
 * and exports together). Events here are about 16 KB, the largest an event may carry: counted by
 * events only (STREAM_BUFFER_LIMIT, 10,000), a stream that never read held 160 MB.
 */

const restUrl = (base: string, merchantId: string) => `${base}/v1/partners/events/stream?merchantId=${merchantId}`;
const trpcUrl = (base: string, merchantId: string) =>
  `${base}/trpc/events.stream?${new URLSearchParams({ input: JSON.stringify({ merchantId }) })}`;

/** The final error of a stream: REST `event: error` `{code, message}`, tRPC `serialized-error`. */
function finalError(stream: SseClient): { code?: string; message?: string } | undefined {
  const frame = stream.frames.find((f) => f.event === 'error' || f.event === 'serialized-error');
  if (!frame) return undefined;
  const body = JSON.parse(frame.data) as { code?: string; message?: string; data?: { code?: string } };
  return frame.event === 'error' ? body : { code: body.data?.code, message: body.message };
}

async function openStalled(url: string, apiKey: string): Promise<SseClient> {
  const stream = await SseClient.open(url, { apiKey, paused: true });
  expect(stream.status).toBe(200);
  return stream;
}

/** Waits until the server holds `n` open streams (subscriptions registered and started). */
const streamsOpen = (server: TestServer, n: number) =>
  until(() => server.app.deps.streams.size === n, 10_000, `${n} open streams`);

describe('a stream that never reads ends once it holds STREAM_BUFFER_BYTES (not only by count)', () => {
  let server: TestServer;
  let tag: GeneratedTag;
  beforeAll(async () => {
    server = await startTestServer({ env: { STREAM_BUFFER_BYTES: String(256 * 1024), STREAM_PING_MS: '60000' } });
    tag = await preverifiedTag(server);
  });
  afterAll(() => server?.close());

  it('REST and tRPC: STREAM_CONSUMER_TOO_SLOW after the events that fit, far below the count limit', async () => {
    const streams = [
      await openStalled(restUrl(server.url, tag.merchantId), server.partner.apiKey),
      await openStalled(trpcUrl(server.url, tag.merchantId), server.partner.apiKey),
    ];
    await streamsOpen(server, 2);
    // 1,000 events of 16 KB (16 MB): more than the sockets' buffers take, 10x fewer than STREAM_BUFFER_LIMIT.
    let peak = 0;
    const inserted = insertBigEvents(server, tag.merchantId, tag.tagId, 1000);
    const watchHeld = setInterval(() => {
      peak = Math.max(peak, server.app.deps.heldBytes?.held ?? 0);
    }, 5);
    try {
      await inserted;
      // Both ended on the server while their clients read nothing.
      await until(() => server.app.deps.streams.size === 0, 20_000, 'the stalled streams to be ended');
    } finally {
      clearInterval(watchHeld);
    }
    for (const stream of streams) {
      stream.resume();
      await stream.waitFor(() => stream.ended, 20_000, 'the stream to end');
      expect(finalError(stream)).toEqual({
        code: 'STREAM_CONSUMER_TOO_SLOW',
        message: expect.stringMatching(/more than the 262144 bytes this server holds for one stream/),
      });
      // What reached the client: what the sockets took before the stream was cut, far from all.
      expect(stream.frames.filter((f) => f.event !== 'error' && f.event !== 'serialized-error').length).toBeLessThan(
        1000,
      );
    }
    // Counted bytes stayed about the two streams' limits (plus one read each), and all were given back.
    expect(peak).toBeLessThan(2 * 2 * 256 * 1024);
    expect(server.app.deps.heldBytes.held).toBe(0);
  }, 90_000);
});

describe('the process budget (HELD_BYTES) ends the stalled streams, not the one that reads', () => {
  let server: TestServer;
  let tag: GeneratedTag;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        HELD_BYTES: String(4 * 1024 * 1024),
        STREAM_BUFFER_BYTES: String(16 * 1024 * 1024),
        STREAM_PING_MS: '60000',
      },
    });
    tag = await preverifiedTag(server);
  });
  afterAll(() => server?.close());

  it('two stalled streams are ended (each under its own 16 MiB limit); the one that reads gets every event', async () => {
    const reader = await SseClient.open(restUrl(server.url, tag.merchantId), { apiKey: server.partner.apiKey });
    const stalled = [
      await openStalled(restUrl(server.url, tag.merchantId), server.partner.apiKey),
      await openStalled(trpcUrl(server.url, tag.merchantId), server.partner.apiKey),
    ];
    await streamsOpen(server, 3);
    // In statements of 5 (80 KB) a few ms apart, as ingestion commits them: the reader takes each
    // burst as it comes (PGlite, the server and this client share one event loop here).
    await insertBigEvents(server, tag.merchantId, tag.tagId, 1000, 0, 5, 10);
    await until(() => server.app.deps.streams.size === 1, 20_000, 'the stalled streams to be ended');
    await reader.waitFor(() => reader.frames.length >= 1000, 30_000, '1000 events');
    expect(reader.ended).toBe(false);
    // Every event once, in seq order (seqs come from the writing transactions: not 1..1000).
    const seqs = rowsOf<{ seq: string }>(
      await server.app.database.db.execute(
        sql`select e.seq::text as seq from events e where e.merchant_id = ${tag.merchantId}::uuid order by e.seq`,
      ),
    ).map((row) => row.seq);
    expect(seqs).toHaveLength(1000);
    expect(reader.frames.map((f) => f.id)).toEqual(seqs);
    for (const stream of stalled) {
      stream.resume();
      await stream.waitFor(() => stream.ended, 20_000, 'the stream to end');
      expect(finalError(stream)).toEqual({
        code: 'STREAM_CONSUMER_TOO_SLOW',
        message: expect.stringMatching(/longest without reading/),
      });
    }
    reader.close();
    await until(() => server.app.deps.streams.size === 0, 5_000, 'the reader to close');
    expect(server.app.deps.heldBytes.held).toBe(0);
  }, 90_000);
});

describe('the process budget (HELD_BYTES) ends stalled exports with an error line', () => {
  let server: TestServer;
  let tag: GeneratedTag;
  let lastSeq = 0;
  beforeAll(async () => {
    server = await startTestServer({
      env: { HELD_BYTES: String(1024 * 1024), EXPORT_BATCH_BYTES: String(512 * 1024) },
    });
    tag = await preverifiedTag(server);
    lastSeq = await insertBigEvents(server, tag.merchantId, tag.tagId, 1000);
  });
  afterAll(() => server?.close());

  it('three exports that stop reading: the stalest end with STREAM_CONSUMER_TOO_SLOW, a resumable cut', async () => {
    const url = `${server.url}/v1/partners/events/export?merchantId=${tag.merchantId}&sortOrder=asc`;
    // Each holds a batch (512 KiB) in its socket, on PostgreSQL one more read ahead: together over 1 MiB.
    const exports = [];
    for (let i = 0; i < 3; i++) {
      const stalled = await stalledGet(url, server.partner.apiKey);
      expect(stalled.status).toBe(200);
      exports.push(stalled);
    }
    // Stalled for a second (STALL_MS) while over the budget: the stalest are ended then.
    await sleep(STALL_MS + 2000);
    const bodies = await Promise.all(exports.map((e) => e.resume()));
    const tails = bodies.map(lastLine);
    const cut = tails.filter((t) => t.complete === false);
    expect(cut.length).toBeGreaterThan(0);
    for (const tail of cut) {
      expect(tail).toMatchObject({
        complete: false,
        error: { code: 'STREAM_CONSUMER_TOO_SLOW', message: expect.stringMatching(/longest without reading.*afterId/) },
      });
      expect(tail.count as number).toBeLessThan(lastSeq);
    }
    for (const tail of tails.filter((t) => t.complete !== false)) expect(tail).toMatchObject({ count: lastSeq });
    await until(() => server.app.deps.heldBytes.held === 0, 5_000, 'held bytes given back');
  }, 90_000);
});
