import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickhouse } from '../../src/db/clickhouse/client.js';
import { createScratchDatabase, postgresAnswers, type ScratchDatabase } from '../helpers/hardening.js';

const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Runs `src/main.ts` with `env` until it exits; its exit code and stderr. A DATA_DIR of its own
 * unless given: the statistics' chDB locks its directory, and the repository's .data/ may be in use.
 */
function startAndFail(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const dataDir = env.DATA_DIR ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'ops-startup-data-'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: SERVER_DIR,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        ...(dataDir ? { DATA_DIR: dataDir } : {}),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not exit: ${stdout}${stderr}`));
    }, 80_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, stderr, stdout });
    });
  });
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// Each case is its own server process: they run side by side.
describe.concurrent('start-up errors: one line naming the fix, exit code 1, no stack', {
  timeout: 90_000,
}, async () => {
  const pg = await postgresAnswers();
  let scratch: ScratchDatabase | undefined;
  let busy: net.Server;
  let busyPort: number;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-startup-'));

  beforeAll(async () => {
    if (pg) scratch = await createScratchDatabase('h_ops_startup');
    busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as net.AddressInfo).port;
  }, 60_000);
  afterAll(async () => {
    busy?.close();
    await scratch?.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const expectOneLine = (result: { code: number | null; stderr: string }, line: string) => {
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`${line}\n`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  };

  it.skipIf(!pg)('the port is in use', async () => {
    const result = await startAndFail({ PORT: String(busyPort), DATABASE_URL: scratch!.url });
    expectOneLine(result, `PORT ${busyPort} is in use: stop the other process or set PORT`);
  });

  it('the database is unreachable: DATABASE_URL named, password masked, the error code', async () => {
    const port = await closedPort();
    const result = await startAndFail({ DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${port}/tags` });
    expectOneLine(
      result,
      `Cannot reach the database at DATABASE_URL=postgres://app:****@127.0.0.1:${port}/tags (ECONNREFUSED): start PostgreSQL there or fix DATABASE_URL`,
    );
    expect(result.stderr).not.toContain('s3cret');
    // The start-up line lists what differs from the defaults (docs/settings.md), the URL without its credentials.
    expect(result.stdout).toContain(
      `settings differing from the defaults: NODE_ENV=production PORT=0 HOST=127.0.0.1 DATABASE_URL=postgres://127.0.0.1:${port}/tags DATA_DIR=`,
    );
    expect(result.stdout).not.toContain('s3cret');
  });

  it.skipIf(!pg)('the database does not exist', async () => {
    const url = new URL(scratch!.url);
    url.pathname = '/h_ops_no_such_database';
    const result = await startAndFail({ DATABASE_URL: url.toString() });
    expectOneLine(
      result,
      `The database "h_ops_no_such_database" does not exist at DATABASE_URL=${url.toString()} (3D000): create it (createdb h_ops_no_such_database) or fix DATABASE_URL`,
    );
  });

  it('the embedded store is locked by another process: the data dir and the holder named', async () => {
    const dataDir = path.join(tmp, 'locked');
    fs.mkdirSync(dataDir);
    // This test process holds the lock (alive, so the lock is not stale).
    fs.writeFileSync(path.join(dataDir, 'pglite.lock'), JSON.stringify({ pid: process.pid, owner: 'the server' }));
    const result = await startAndFail({ DATA_DIR: dataDir });
    expectOneLine(
      result,
      `The embedded database in DATA_DIR=${dataDir} is locked by the server (pid ${process.pid}): stop it, or set DATA_DIR or DATABASE_URL`,
    );
  });

  it('the embedded store cannot be created in the data dir', async () => {
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, '');
    const dataDir = path.join(file, 'data');
    const result = await startAndFail({ DATA_DIR: dataDir });
    expectOneLine(
      result,
      `Cannot open the embedded database in DATA_DIR=${dataDir} (ENOTDIR): make the directory writable, or set DATA_DIR or DATABASE_URL`,
    );
  });

  it.skipIf(!pg)(
    'the statistics are open in another process: the directory named, CLICKHOUSE_URL suggested',
    async () => {
      const dataDir = path.join(tmp, 'stats-held');
      const statsDir = path.join(dataDir, 'clickhouse');
      // This test process holds the statistics' directory, as a second server on one DATA_DIR would.
      const held = await openClickhouse({ kind: 'chdb', path: statsDir, database: 'held' });
      try {
        const result = await startAndFail({ DATABASE_URL: scratch!.url, DATA_DIR: dataDir });
        expect(result.code).toBe(1);
        // chDB writes its own line about the lock to stderr before ours.
        expect(result.stderr.trimEnd().split('\n').at(-1)).toBe(
          `The statistics in ${statsDir} are open in another process: stop it, set DATA_DIR, or give several processes one ClickHouse with CLICKHOUSE_URL`,
        );
      } finally {
        await held.close();
      }
    },
  );

  it.skipIf(!pg)('NATS is configured and unreachable', async () => {
    const port = await closedPort();
    const result = await startAndFail({ DATABASE_URL: scratch!.url, EVENT_LOG_URL: `nats://127.0.0.1:${port}` });
    expectOneLine(
      result,
      `Cannot reach NATS at EVENT_LOG_URL=nats://127.0.0.1:${port} (ECONNREFUSED): start NATS JetStream there or fix EVENT_LOG_URL`,
    );
  });

  it.skipIf(!pg)('Redis is configured and unreachable', async () => {
    const port = await closedPort();
    const result = await startAndFail({ DATABASE_URL: scratch!.url, REDIS_URL: `redis://:pw@127.0.0.1:${port}` });
    expectOneLine(
      result,
      `Cannot reach Redis at REDIS_URL=redis://:****@127.0.0.1:${port} (ECONNREFUSED): start Redis there or fix REDIS_URL`,
    );
  });

  it.skipIf(!pg)('LOG_LEVEL=debug adds the stack', async () => {
    const result = await startAndFail({ PORT: String(busyPort), DATABASE_URL: scratch!.url, LOG_LEVEL: 'debug' });
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(`PORT ${busyPort} is in use: stop the other process or set PORT`);
    expect(result.stderr).toMatch(/\n\s+at /);
  });
});
