import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import {
  SERVER_DIR,
  type ServerProcess,
  spawnServer,
  startTestServer,
  TEST_TARGET_HOST,
  type TestPartner,
  type TestServer,
  uniquePartnerDomain,
} from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/hardening.js';
import { SseClient } from '../helpers/sse.js';

/**
 * Finding 4 of the security round: a revoked or expired key kept its open event streams (REST and
 * tRPC), kept alive by pings. Now each stream ends with a final `UNAUTHORIZED` error frame within a
 * second of its key's revocation (any process) or at its expiry.
 */

const restUrl = (base: string, merchantId: string) => `${base}/v1/partners/events/stream?merchantId=${merchantId}`;
const trpcUrl = (base: string, merchantId: string) =>
  `${base}/trpc/events.stream?${new URLSearchParams({ input: JSON.stringify({ merchantId }) })}`;

/** The code of the final error frame: REST `event: error` `{code}`, tRPC `serialized-error` `{data: {code}}`. */
function finalErrorCode(stream: SseClient): string | undefined {
  const frame = stream.frames.find((f) => f.event === 'error' || f.event === 'serialized-error');
  if (!frame) return undefined;
  const body = JSON.parse(frame.data) as { code?: string; data?: { code?: string } };
  return frame.event === 'error' ? body.code : body.data?.code;
}

/** Resolves with the time (performance.now()) the stream ended; rejects after `ms`. */
async function endedAt(stream: SseClient, ms: number): Promise<number> {
  await stream.waitFor(() => stream.ended, ms, 'the stream to end');
  return performance.now();
}

async function openBoth(base: string, apiKey: string, merchantId: string): Promise<SseClient[]> {
  const streams = await Promise.all([
    SseClient.open(restUrl(base, merchantId), { apiKey }),
    SseClient.open(trpcUrl(base, merchantId), { apiKey }),
  ]);
  for (const stream of streams) expect(stream.status).toBe(200);
  // Both subscriptions are registered once the first bytes (': connected' / tRPC's connected frame) arrived.
  for (const stream of streams) await stream.waitFor(() => stream.comments.length + stream.frames.length > 0, 5000);
  return streams;
}

describe('finding 4: streams end with their key (one process, PGlite or PostgreSQL)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { STREAM_PING_MS: '200' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function partnerWithMerchant(): Promise<{ partner: TestPartner; merchantId: string }> {
    const partner = await server.createPartner('Revoked');
    const merchant = await api(server, partner.apiKey).post('/v1/partners/merchant', { name: 'Shop' });
    expect(merchant.status).toBe(201);
    return { partner, merchantId: merchant.body.merchantId as string };
  }

  it('revocation ends REST and tRPC streams with UNAUTHORIZED within 1 s', async () => {
    const { partner, merchantId } = await partnerWithMerchant();
    const streams = await openBoth(server.url, partner.apiKey, merchantId);
    const revokedAt = performance.now();
    expect(await server.revokeKeys(partner.partnerId)).toBe(1);
    for (const stream of streams) {
      const elapsed = (await endedAt(stream, 3000)) - revokedAt;
      expect(finalErrorCode(stream)).toBe('UNAUTHORIZED');
      expect(elapsed).toBeLessThan(1000);
    }
  });

  it('a key that expires while streaming (rotation with a short overlap) ends its streams at expiry', async () => {
    const { partner, merchantId } = await partnerWithMerchant();
    const streams = await openBoth(server.url, partner.apiKey, merchantId);
    const rotatedAt = performance.now();
    const rotated = await server.rotateKey(partner.partnerId, 1500);
    for (const stream of streams) {
      const elapsed = (await endedAt(stream, 5000)) - rotatedAt;
      expect(finalErrorCode(stream)).toBe('UNAUTHORIZED');
      expect(elapsed).toBeGreaterThan(1200);
      expect(elapsed).toBeLessThan(2500);
    }
    // The new key streams on.
    const [fresh] = await openBoth(server.url, rotated.apiKey, merchantId).then((s) => {
      s[1]?.close();
      return s;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fresh?.ended).toBe(false);
    fresh?.close();
  });

  it('a stream opened with a key that already has an expiry ends at that expiry', async () => {
    const { partner, merchantId } = await partnerWithMerchant();
    await server.rotateKey(partner.partnerId, 1500);
    const openedAt = performance.now();
    const stream = await SseClient.open(restUrl(server.url, merchantId), { apiKey: partner.apiKey });
    expect(stream.status).toBe(200);
    const elapsed = (await endedAt(stream, 5000)) - openedAt;
    expect(finalErrorCode(stream)).toBe('UNAUTHORIZED');
    expect(elapsed).toBeLessThan(2000);
  });
});

/** `pnpm partner revoke-key <id> --json` as a process of its own; resolves when it printed its answer. */
function revokeWithCli(databaseUrl: string, partnerId: string): Promise<{ printedAt: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'revoke-key', partnerId, '--json'], {
      cwd: SERVER_DIR,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let printedAt = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      if (printedAt === 0) printedAt = performance.now();
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve({ printedAt, output }) : reject(new Error(`CLI ${code}: ${output}`)),
    );
  });
}

describe.skipIf(!process.env.TEST_DATABASE_URL)(
  'finding 4: two server processes on PostgreSQL, revoked by the CLI',
  () => {
    let scratch: ScratchDatabase;
    let servers: ServerProcess[] = [];
    let database: DatabaseHandle;

    beforeAll(async () => {
      scratch = await createScratchDatabase('sec_revoke');
      const env = {
        DATABASE_URL: scratch.url,
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        TAG_TARGET_HOST: TEST_TARGET_HOST,
        STREAM_PING_MS: '200',
        RATE_LIMIT_PER_MINUTE: '0',
        COLLECT_RATE_LIMIT_PER_MINUTE: '0',
        TAG_MONITOR: 'off',
        WEBHOOK_DELIVERY: 'off',
      };
      // One after the other: the first applies the migrations.
      servers.push(await spawnServer({ inheritEnv: true, env }));
      servers.push(await spawnServer({ inheritEnv: true, env }));
      database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 });
    }, 150_000);

    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      servers = [];
      await database?.close();
      await scratch?.drop();
    });

    it('streams on both processes end with UNAUTHORIZED within 1 s of `pnpm partner revoke-key`', async () => {
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const partner = await onboardPartner(
        database.db,
        { name: 'Revoked', domain: uniquePartnerDomain() },
        TEST_TARGET_HOST,
      );
      const merchant = await api(a, partner.apiKey).post('/v1/partners/merchant', { name: 'Shop' });
      expect(merchant.status).toBe(201);
      const merchantId = merchant.body.merchantId as string;
      const streams = [
        ...(await openBoth(a.url, partner.apiKey, merchantId)),
        ...(await openBoth(b.url, partner.apiKey, merchantId)),
      ];
      const ends = streams.map((stream) => endedAt(stream, 15_000));
      const cli = await revokeWithCli(scratch.url, partner.partnerId);
      expect(JSON.parse(cli.output)).toMatchObject({ revoked: 1 });
      const elapsed = (await Promise.all(ends)).map((at) => Math.max(0, at - cli.printedAt));
      for (const stream of streams) expect(finalErrorCode(stream)).toBe('UNAUTHORIZED');
      // The figure for the closing note: revocation (the CLI's answer, after its commit) -> stream end.
      console.info(
        `revocation -> stream end (ms, REST/tRPC on A, REST/tRPC on B): ${elapsed.map((ms) => ms.toFixed(1)).join(', ')}`,
      );
      expect(Math.max(...elapsed)).toBeLessThan(1000);
      // A new request with the key: 401 as before.
      expect((await api(b, partner.apiKey).get('/v1/partners/merchant')).status).toBe(401);
    }, 60_000);
  },
);
