// Event stream benchmarks on a real PostgreSQL (a scratch database: its events table is filled).
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/scratch npx tsx scripts/bench-stream.ts
// 1. Cost of the ordering lock (migration 0001): concurrent multi-row inserts with the
//    `events_order_lock` trigger, as a ratio to the same run without it (baseline).
// 2. Delivery latency across two app instances (each with its own connections and LISTEN): the
//    time from POST /v1/collect on B to the event on a stream on A, as a ratio to the time of the
//    POST itself (baseline, measured in the same run).
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { sql } from 'drizzle-orm';
import { startApp } from '../src/app.js';
import { openDatabase } from '../src/db/client.js';
import { parseEnv } from '../src/env.js';
import { onboardPartner } from '../src/services/partner/onboard-partner.js';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL (a scratch database) is required');
const WRITERS = Number(process.env.WRITERS ?? 8);
const STATEMENTS = Number(process.env.STATEMENTS ?? 40);
const ROWS = Number(process.env.ROWS ?? 100);
const SAMPLES = Number(process.env.SAMPLES ?? 40);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

async function insertThroughput(db: Awaited<ReturnType<typeof openDatabase>>['db']): Promise<number> {
  const merchants = Array.from({ length: WRITERS }, () => randomUUID());
  const tagId = randomUUID();
  const started = performance.now();
  await Promise.all(
    merchants.map(async (merchantId) => {
      for (let s = 0; s < STATEMENTS; s++) {
        const prefix = `${randomBytes(6).toString('hex')}-`;
        await db.execute(sql`
          insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
          select ${merchantId}::uuid, ${prefix} || g, ${tagId}::uuid, 'm', 'PageView', now(), '{"a":1}'
          from generate_series(1, ${ROWS}) g
          on conflict do nothing`);
      }
    }),
  );
  return (WRITERS * STATEMENTS * ROWS) / ((performance.now() - started) / 1000);
}

async function lockCost(): Promise<void> {
  const handle = await openDatabase({ kind: 'postgres', url: url as string, maxConnections: WRITERS });
  try {
    const rounds: { withLock: number; without: number }[] = [];
    for (let round = 0; round < 3; round++) {
      await handle.db.execute(sql`drop trigger if exists events_order_lock on events`);
      const without = await insertThroughput(handle.db);
      await handle.db.execute(
        sql`create trigger events_order_lock before insert on events for each statement execute function partner_events_order_lock()`,
      );
      const withLock = await insertThroughput(handle.db);
      rounds.push({ withLock, without });
    }
    const ratio = rounds.map((r) => r.withLock / r.without);
    console.log(
      `ordering lock: ${WRITERS} writers x ${STATEMENTS} statements x ${ROWS} rows; rows/s with/without per round: ${rounds
        .map((r) => `${Math.round(r.withLock)}/${Math.round(r.without)}`)
        .join(', ')}; median ratio ${quantile(ratio, 0.5).toFixed(2)}`,
    );
  } finally {
    await handle.close();
  }
}

async function latency(): Promise<void> {
  const env = parseEnv({ NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', DATABASE_URL: url });
  const dbA = await openDatabase({ kind: 'postgres', url: url as string });
  const dbB = await openDatabase({ kind: 'postgres', url: url as string });
  const a = await startApp(env, { database: dbA });
  const b = await startApp(env, { database: dbB });
  try {
    const domain = `bench-${randomBytes(4).toString('hex')}.partner-tags-test.com`;
    const partner = await onboardPartner(dbA.db, { name: 'Bench', domain }, env.TAG_TARGET_HOST);
    const auth = { authorization: `Bearer ${partner.apiKey}`, 'content-type': 'application/json' };
    const merchant = (await (
      await fetch(`${b.url}/v1/partners/merchant`, { method: 'POST', headers: auth, body: '{"name":"Bench"}' })
    ).json()) as { merchantId: string };
    const tag = (await (
      await fetch(`${b.url}/v1/partners/tag/generate`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ merchantId: merchant.merchantId, domain }),
      })
    ).json()) as { tagId: string };

    const arrivals = new Map<string, number>();
    let buffer = '';
    await new Promise<void>((resolve, reject) => {
      http
        .get(
          `${a.url}/v1/partners/events/stream?merchantId=${merchant.merchantId}`,
          { headers: { authorization: auth.authorization }, agent: false },
          (res) => {
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              buffer += chunk;
              for (const match of buffer.matchAll(/"id":"(lat-\d+)"/g)) {
                if (match[1] && !arrivals.has(match[1])) arrivals.set(match[1], performance.now());
              }
              buffer = buffer.slice(Math.max(0, buffer.lastIndexOf('\n\n')));
            });
            resolve();
          },
        )
        .on('error', reject);
    });
    const post: number[] = [];
    const delivered: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const id = `lat-${i}`;
      const started = performance.now();
      const res = await fetch(`${b.url}/v1/collect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tagId: tag.tagId, events: [{ id, event_name: 'PageView' }] }),
      });
      await res.text();
      post.push(performance.now() - started);
      while (!arrivals.has(id)) await new Promise((r) => setTimeout(r, 1));
      delivered.push((arrivals.get(id) as number) - started);
    }
    console.log(
      `latency B collect -> A stream, ${SAMPLES} events: p50 ${quantile(delivered, 0.5).toFixed(1)} ms, p95 ${quantile(delivered, 0.95).toFixed(1)} ms, max ${Math.max(...delivered).toFixed(1)} ms; ` +
        `baseline POST /v1/collect p50 ${quantile(post, 0.5).toFixed(1)} ms; ratio p50 ${(quantile(delivered, 0.5) / quantile(post, 0.5)).toFixed(2)}`,
    );
  } finally {
    await a.close(1000);
    await b.close(1000);
    await dbA.close();
    await dbB.close();
  }
}

await lockCost();
await latency();
