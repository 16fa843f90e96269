import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { inArray } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { events, merchants } from '../../src/db/schema/index.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import { uniquePartnerDomain } from '../../src/testing/index.js';
import { createScratchDatabase, postgresAnswers, spawnServer } from '../helpers/hardening.js';

/**
 * SIGTERM to a real server process (`node --import tsx src/main.ts`) while 16 clients keep
 * creating merchants and sending event batches: every 2xx the process answered before it exited
 * must be in the database afterwards. Runs on a scratch PostgreSQL database when 127.0.0.1:5432
 * (or TEST_DATABASE_URL's server) answers, else on a PGlite data directory.
 */
describe('graceful shutdown under load', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function openStore(): Promise<{ env: Record<string, string>; open: () => Promise<DatabaseHandle> }> {
    if (await postgresAnswers()) {
      const scratch = await createScratchDatabase('sigterm');
      cleanups.push(scratch.drop);
      return {
        env: { DATABASE_URL: scratch.url },
        open: () => openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 }),
      };
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigterm-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    return {
      env: { DATA_DIR: dir },
      open: () => openDatabase({ kind: 'pglite', dataDir: dir, lockOwner: 'graceful-shutdown test' }),
    };
  }

  it('keeps every acknowledged write (merchants and events) and exits 0', async () => {
    const store = await openStore();
    const setup = await store.open();
    const domain = uniquePartnerDomain();
    let apiKey: string;
    try {
      apiKey = (await onboardPartner(setup.db, { name: 'Sigterm', domain }, 'tags.partner-tags.example')).apiKey;
    } finally {
      await setup.close();
    }
    // A 60 s start deadline: a cold `tsx` start on a loaded CI machine printed nothing in 30 s.
    const server = await spawnServer(
      {
        ...store.env,
        LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '1000000',
        // One tag under write load: the collector volume quotas off.
        COLLECT_TAG_EVENTS_PER_MINUTE: '0',
        COLLECT_TAG_BYTES_PER_MINUTE: '0',
        COLLECT_TAG_EVENTS_PER_DAY: '0',
        COLLECT_TAG_BYTES_PER_DAY: '0',
        COLLECT_BYTES_PER_ADDRESS_PER_MINUTE: '0',
      },
      60_000,
    );
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const post = (p: string, body: unknown, headers: Record<string, string> = auth) =>
      fetch(`${server.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const { merchantId } = (await (await post('/v1/partners/merchant', { name: 'Sigterm shop' })).json()) as {
      merchantId: string;
    };
    const { tagId } = (await (await post('/v1/partners/tag/generate', { merchantId, domain })).json()) as {
      tagId: string;
    };

    const ackedEvents: string[] = [];
    const ackedMerchants: string[] = [];
    let stop = false;
    const worker = async (n: number) => {
      for (let i = 0; !stop; i++) {
        try {
          if (i % 3 === 0) {
            const res = await post('/v1/partners/merchant', { name: `w${n}-${i}` });
            if (res.status === 201) ackedMerchants.push(((await res.json()) as { merchantId: string }).merchantId);
            else await res.arrayBuffer();
          } else {
            const ids = Array.from({ length: 20 }, () => randomUUID());
            const res = await post(
              '/v1/collect',
              { tagId, events: ids.map((id) => ({ id, event_name: 'page_view' })) },
              { 'content-type': 'application/json' },
            );
            await res.arrayBuffer();
            if (res.status >= 200 && res.status < 300) ackedEvents.push(...ids);
          }
        } catch {
          // Connection refused or reset once the process stops listening: the request was not acknowledged.
          if (server.child.exitCode !== null) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, n) => worker(n));
    // Traffic is flowing (at least 500 events acknowledged) before the signal.
    for (let waited = 0; ackedEvents.length < 500 && waited < 20_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ackedBeforeSignal = ackedEvents.length;
    // One request the server has surely begun (it answered `100 Continue`, so its handler runs) and
    // whose body is still half-sent when the signal comes: it must still be answered 202 and stored.
    // (Whether the workers' requests in flight were read before the signal or after, which is then
    // a 503 with Retry-After, is up to the scheduler.)
    const inFlight = await beginHalfSentBatch(`${server.url}/v1/collect`, tagId);
    server.kill('SIGTERM');
    for (let waited = 0; !server.output().includes('shutting down') && waited < 10_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const inFlightAnswer = await inFlight.finish();
    const code = await server.exited;
    stop = true;
    await Promise.all(workers);

    expect(code).toBe(0);
    expect(ackedBeforeSignal).toBeGreaterThanOrEqual(500);
    // The request begun before the signal was finished after it (and told to close its connection),
    // then the port closed.
    expect(inFlightAnswer).toEqual({ status: 202, connection: 'close' });
    ackedEvents.push(...inFlight.ids);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();

    const check = await store.open();
    try {
      const storedEvents = new Set<string>();
      for (let i = 0; i < ackedEvents.length; i += 5000) {
        const rows = await check.db
          .select({ id: events.id })
          .from(events)
          .where(inArray(events.id, ackedEvents.slice(i, i + 5000)));
        for (const row of rows) storedEvents.add(row.id);
      }
      const storedMerchants = ackedMerchants.length
        ? await check.db.select({ id: merchants.id }).from(merchants).where(inArray(merchants.id, ackedMerchants))
        : [];
      const lostEvents = ackedEvents.filter((id) => !storedEvents.has(id)).length;
      console.log(
        `sigterm figures: ${JSON.stringify({ ackedEvents: ackedEvents.length, lostEvents, ackedMerchants: ackedMerchants.length, lostMerchants: ackedMerchants.length - storedMerchants.length })}`,
      );
      expect(lostEvents).toBe(0);
      expect(storedMerchants).toHaveLength(ackedMerchants.length);
    } finally {
      await check.close();
    }
    // The process logged its shutdown and never the key.
    expect(server.output()).toContain('shutting down');
    expect(server.output()).not.toContain(apiKey);
    expect(server.output()).not.toContain(apiKey.slice(8));
  }, 150_000);
});

/**
 * Starts a 20-event batch to `url` with `Expect: 100-continue`, sends half its body once the server
 * answered `100 Continue`, and resolves then; `finish()` sends the rest and resolves with the answer.
 */
function beginHalfSentBatch(
  url: string,
  tagId: string,
): Promise<{ ids: string[]; finish: () => Promise<{ status: number | undefined; connection: string | undefined }> }> {
  const ids = Array.from({ length: 20 }, () => randomUUID());
  const body = Buffer.from(JSON.stringify({ tagId, events: ids.map((id) => ({ id, event_name: 'page_view' })) }));
  const half = Math.floor(body.length / 2);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
    });
    const answer = new Promise<{ status: number | undefined; connection: string | undefined }>((done, fail) => {
      req.once('response', (res) => {
        res.resume();
        res.once('end', () => done({ status: res.statusCode, connection: res.headers.connection }));
      });
      req.once('error', fail);
    });
    answer.catch(reject);
    req.once('continue', () => {
      req.write(body.subarray(0, half), () =>
        resolve({
          ids,
          finish: () => {
            req.end(body.subarray(half));
            return answer;
          },
        }),
      );
    });
    req.flushHeaders();
  });
}
