import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { spawnServer, TEST_TARGET_HOST, uniquePartnerDomain } from '../../src/testing/index.js';
import { createScratchDatabase, postgresAnswers, type ScratchDatabase } from '../helpers/hardening.js';
import { SseClient } from '../helpers/sse.js';

/**
 * Issue 17 item 2: on SIGTERM every open event stream (REST SSE and the tRPC subscription) gets a
 * final frame (503 SERVICE_UNAVAILABLE with a retry hint) and then a clean end of the response
 * (the chunked body's terminator, not a reset), within the grace period; the process exits 0.
 */

const pgAvailable = await postgresAnswers();
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

/** A database with an onboarded partner, closed again: the server process opens it. */
async function prepare(kind: 'pglite' | 'postgres'): Promise<{ env: Record<string, string>; apiKey: string }> {
  const domain = uniquePartnerDomain();
  if (kind === 'pglite') {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-final-frame-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const db = await openDatabase({ kind: 'pglite', dataDir, lockOwner: 'test' });
    const { apiKey } = await onboardPartner(db.db, { name: 'Final frame', domain }, TEST_TARGET_HOST);
    await db.close();
    return { env: { DATA_DIR: dataDir }, apiKey };
  }
  const scratch: ScratchDatabase = await createScratchDatabase('ops_final_frame');
  cleanup.push(() => scratch.drop());
  const db = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 });
  const { apiKey } = await onboardPartner(db.db, { name: 'Final frame', domain }, TEST_TARGET_HOST);
  await db.close();
  return { env: { DATABASE_URL: scratch.url }, apiKey };
}

describe.each([
  { kind: 'pglite' as const, skip: false },
  { kind: 'postgres' as const, skip: !pgAvailable },
])('SIGTERM with open event streams ($kind)', ({ kind, skip }) => {
  it.skipIf(skip)(
    'REST SSE and tRPC subscription each get a final SERVICE_UNAVAILABLE frame with a retry hint, then a clean end',
    async () => {
      const { env, apiKey } = await prepare(kind);
      const server = await spawnServer({
        env: {
          ...env,
          TAG_TARGET_HOST: TEST_TARGET_HOST,
          TAG_MONITOR: 'off',
          WEBHOOK_DELIVERY: 'off',
          STREAM_PING_MS: '60000',
        },
        // A fresh embedded database migrates first: minutes on a loaded CI (seconds when idle).
        timeoutMs: 180_000,
      });
      cleanup.push(async () => {
        await server.stop(2000);
      });
      const created = await fetch(`${server.url}/v1/partners/merchant`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Shop' }),
      });
      expect(created.status).toBe(201);
      const { merchantId } = (await created.json()) as { merchantId: string };
      const rest = await SseClient.open(`${server.url}/v1/partners/events/stream?merchantId=${merchantId}`, {
        apiKey,
      });
      const trpc = await SseClient.open(
        `${server.url}/trpc/events.stream?${new URLSearchParams({ input: JSON.stringify({ merchantId }) })}`,
        { apiKey },
      );
      for (const stream of [rest, trpc]) {
        expect(stream.status).toBe(200);
        await stream.waitFor(() => stream.comments.length + stream.frames.length > 0, 10_000, 'the first bytes');
      }
      const signalledAt = performance.now();
      server.kill('SIGTERM');
      await Promise.all([rest, trpc].map((stream) => stream.waitFor(() => stream.ended, 10_000, 'the end')));
      const endedMs = performance.now() - signalledAt;

      // REST: the last frame is `event: error` {message, code}, with the SSE reconnection delay.
      const restLast = rest.frames.at(-1);
      expect(restLast?.event).toBe('error');
      expect(JSON.parse(restLast?.data ?? '{}')).toEqual({
        message: expect.stringMatching(/shutting down/),
        code: 'SERVICE_UNAVAILABLE',
      });
      expect(restLast?.retry).toBe(1000);
      // tRPC: the last frame is tRPC's `serialized-error` with the same code and the retry hint in its data.
      const trpcLast = trpc.frames.at(-1);
      expect(trpcLast?.event).toBe('serialized-error');
      expect(JSON.parse(trpcLast?.data ?? '{}')).toMatchObject({
        data: { code: 'SERVICE_UNAVAILABLE', httpStatus: 503, retryAfter: 1 },
      });
      // A clean end: the whole chunked body arrived (terminator included), no reset.
      for (const stream of [rest, trpc]) expect(stream.res.complete).toBe(true);
      expect(await server.exited).toBe(0);
      // Within the grace period (10 s): the streams end at once, not when the grace period runs out.
      expect(endedMs).toBeLessThan(3000);
      console.info(`${kind}: SIGTERM -> both streams ended in ${endedMs.toFixed(0)} ms`);
    },
    240_000,
  );
});
