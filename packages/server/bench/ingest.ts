/**
 * `pnpm bench:ingest`: ingestion throughput and accept latency of the live tag's collector.
 *
 * A server process (src/main.ts) on the real PostgreSQL; N concurrent senders (default 64) post
 * event batches over HTTP on loopback to `POST /e` on the tag's collector host (or to
 * `/v1/collect` with --endpoint=collect) for a fixed time. Then, in the same run and on the same
 * database, the raw batched insert (`storeEvents`, the one insert function, alone on one
 * connection) for the same time. Printed: events/s, p50/p99 accept latency, the raw insert rate,
 * and their ratio. The database is a scratch one, created and dropped here unless --database-url
 * is given. Options: --quick (3 s phases), --duration=S, --senders=N, --batch=N, --endpoint=e|collect,
 * --database-url=URL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { openDatabase } from '../src/db/client.js';
import { type EventInsertRow, storeEvents } from '../src/services/events/store-events.js';
import { onboardPartner } from '../src/services/partner/onboard-partner.js';

const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGET_HOST = 'tags.partner-tags.example';

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}
const quick = process.argv.includes('--quick');
const seconds = Number(option('duration') ?? (quick ? 3 : 15));
const senders = Number(option('senders') ?? 64);
const batchSize = Number(option('batch') ?? 20);
const endpoint = option('endpoint') === 'collect' ? 'collect' : 'e';
const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function startServer(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: SERVER_DIR, env, stdio: 'pipe' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Partner Tags API on http/.test(output)) resolve({ child, exited });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => reject(new Error(`the server exited before listening:\n${output}`)));
  });
}

function request(
  agent: http.Agent,
  port: number,
  options: { method: string; path: string; host?: string; body?: string; headers?: Record<string, string> },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        agent,
        method: options.method,
        path: options.path,
        headers: {
          ...(options.host ? { host: options.host } : {}),
          ...(options.body !== undefined ? { 'content-type': 'text/plain;charset=UTF-8' } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const given = option('database-url');
  const scratch = given ? null : `bench_ingest_${Date.now()}`;
  const admin = scratch ? postgres(adminUrl, { max: 1, onnotice: () => {} }) : null;
  if (admin && scratch) await admin.unsafe(`create database ${scratch}`);
  const databaseUrl = given ?? adminUrl.replace(/\/[^/]*$/, `/${scratch}`);
  let server: { child: ChildProcess; exited: Promise<unknown> } | undefined;
  try {
    const database = await openDatabase({ kind: 'postgres', url: databaseUrl, maxConnections: 2 });
    const domain = `bench-${randomUUID().slice(0, 8)}.partner-tags-test.com`;
    const partner = await onboardPartner(database.db, { name: 'Bench', domain }, TARGET_HOST);
    const collectorHost = `${partner.record.name}.${domain}`;

    const port = await freePort();
    server = await startServer({
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      TAG_TARGET_HOST: TARGET_HOST,
      RATE_LIMIT_PER_MINUTE: '0',
      COLLECT_RATE_LIMIT_PER_MINUTE: '0',
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: senders });
    const auth = { authorization: `Bearer ${partner.apiKey}`, 'content-type': 'application/json' };
    const merchant = JSON.parse(
      (
        await request(agent, port, {
          method: 'POST',
          path: '/v1/partners/merchant',
          body: '{"name":"Bench"}',
          headers: auth,
        })
      ).body,
    ) as { merchantId: string };
    const tag = JSON.parse(
      (
        await request(agent, port, {
          method: 'POST',
          path: '/v1/partners/tag/generate',
          body: JSON.stringify({ merchantId: merchant.merchantId, domain }),
          headers: auth,
        })
      ).body,
    ) as { tagId: string };

    // Phase 1: 64 senders over HTTP.
    const latencies: number[] = [];
    let accepted = 0;
    let refused = 0;
    let failed = 0;
    let sequence = 0;
    const body = () =>
      JSON.stringify({
        tagId: tag.tagId,
        events: Array.from({ length: batchSize }, () => ({
          id: `b${++sequence}`,
          event_name: sequence % 10 === 0 ? 'Purchase' : 'PageView',
          data: { path: '/product/123', value: 12.5, currency: 'EUR' },
        })),
      });
    const send = (payload: string) =>
      endpoint === 'e'
        ? request(agent, port, { method: 'POST', path: '/e', host: collectorHost, body: payload })
        : request(agent, port, { method: 'POST', path: '/v1/collect', body: payload });
    // Warm-up (JIT, connection pool, caches), not measured.
    await Promise.all(Array.from({ length: senders }, () => send(body())));
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: senders }, async () => {
        while (performance.now() < deadline) {
          const payload = body();
          const t0 = performance.now();
          try {
            const res = await send(payload);
            if (res.status === 202) {
              latencies.push(performance.now() - t0);
              accepted += batchSize;
            } else if (res.status === 503) {
              refused += 1;
              await new Promise((r) => setTimeout(r, 50));
            } else failed += 1;
          } catch {
            failed += 1;
          }
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    agent.destroy();
    server.child.kill('SIGTERM');
    await server.exited;
    server = undefined;
    latencies.sort((a, b) => a - b);

    const counted = await database.db.execute(
      sql`select count(*)::int as stored from events where tag_id = ${tag.tagId}`,
    );
    const stored = Number((counted as unknown as { stored: number }[])[0]?.stored ?? 0);

    // Phase 2: the raw batched insert into the same database, same row shape.
    const rawBatch = 1000;
    let rawRows = 0;
    let rawSeq = 0;
    const rawStarted = performance.now();
    const rawDeadline = rawStarted + seconds * 1000;
    while (performance.now() < rawDeadline) {
      const rows: EventInsertRow[] = Array.from({ length: rawBatch }, () => ({
        merchantId: merchant.merchantId,
        tagId: tag.tagId,
        id: `raw${++rawSeq}`,
        muid: randomUUID(),
        eventName: 'PageView',
        eventTime: new Date().toISOString(),
        rawData: '{"path":"/product/123","value":12.5,"currency":"EUR"}',
      }));
      await storeEvents(database.db, rows);
      rawRows += rawBatch;
    }
    const rawElapsed = (performance.now() - rawStarted) / 1000;
    await database.close();

    const httpRate = accepted / elapsed;
    const rawRate = rawRows / rawElapsed;
    const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
    const rows: [string, string][] = [
      ['endpoint', endpoint === 'e' ? 'POST /e (collector host)' : 'POST /v1/collect'],
      ['senders x events per request', `${senders} x ${batchSize}`],
      ['duration (s)', elapsed.toFixed(1)],
      ['events accepted (202)', fmt(accepted)],
      ['events stored (checked in the database)', fmt(stored - senders * batchSize)],
      ['requests refused 503 / failed', `${refused} / ${failed}`],
      ['ingest events/s', fmt(httpRate)],
      ['accept latency p50 (ms)', percentile(latencies, 50).toFixed(1)],
      ['accept latency p99 (ms)', percentile(latencies, 99).toFixed(1)],
      [`raw batched insert rows/s (storeEvents, ${rawBatch} rows, 1 connection)`, fmt(rawRate)],
      ['ratio ingest / raw insert', (httpRate / rawRate).toFixed(2)],
      ['target >= 20,000 events/s', httpRate >= 20_000 ? 'met' : 'NOT met'],
    ];
    const width = Math.max(...rows.map(([k]) => k.length));
    process.stdout.write(`\nIngest benchmark (${new Date().toISOString()})\n`);
    for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);
    process.stdout.write('\n');
    if (accepted > 0 && stored - senders * batchSize !== accepted) {
      process.stderr.write('events accepted and stored differ\n');
      process.exitCode = 1;
    }
  } finally {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    if (admin && scratch) {
      await admin.unsafe(`drop database if exists ${scratch} with (force)`);
      await admin.end();
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:ingest failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
