/**
 * stream: (1) the cost of the ordering lock (migration 0001's `events_order_lock` trigger):
 * concurrent multi-row inserts with it against the same run without it; (2) delivery latency
 * across two API processes on one database: `POST /v1/collect` on B until the event arrives on a
 * stream held on A, against the time of the POST itself.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { apiServer, type BenchContext } from '../lib/context.js';
import { log } from '../lib/log.js';
import { quantile, ratio } from '../lib/stats.js';
import type { Section } from './types.js';

export interface LockCost {
  writers: number;
  statements: number;
  rows: number;
  rounds: { withLock: number; without: number }[];
  /** Median over rounds of rows/s with the lock / without. */
  ratio: number;
}

export interface DeliveryLatency {
  samples: number;
  deliveredP50: number;
  deliveredP95: number;
  deliveredMax: number;
  postP50: number;
  /** Delivered p50 / POST p50. */
  ratio: number;
}

export interface StreamResult {
  lock: LockCost;
  latency: DeliveryLatency;
}

async function lockCost(ctx: BenchContext): Promise<LockCost> {
  const writers = 8;
  const statements = ctx.settings.quick ? 10 : 40;
  const rows = 100;
  const merchantIds = Array.from({ length: writers }, () => randomUUID());
  const tagId = randomUUID();
  const throughput = async () => {
    const started = performance.now();
    await Promise.all(
      merchantIds.map(async (merchantId) => {
        for (let s = 0; s < statements; s++) {
          const prefix = `${randomBytes(6).toString('hex')}-`;
          await ctx.raw`insert into events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data)
            select ${merchantId}::uuid, ${prefix} || g, ${tagId}::uuid, 'm', 'PageView', now(), '{"a":1}'
            from generate_series(1, ${rows}::int) g
            on conflict do nothing`;
        }
      }),
    );
    return (writers * statements * rows) / ((performance.now() - started) / 1000);
  };
  const rounds: LockCost['rounds'] = [];
  try {
    for (let round = 0; round < 3; round++) {
      await ctx.raw`drop trigger if exists events_order_lock on events`;
      const without = await throughput();
      await ctx.raw`create trigger events_order_lock before insert on events
        for each statement execute function partner_events_order_lock()`;
      const withLock = await throughput();
      rounds.push({ withLock, without });
    }
  } finally {
    await ctx.raw`drop trigger if exists events_order_lock on events`;
    await ctx.raw`create trigger events_order_lock before insert on events
      for each statement execute function partner_events_order_lock()`;
    await ctx.raw`delete from events where merchant_id = any(${merchantIds}::uuid[])`;
  }
  return {
    writers,
    statements,
    rows,
    rounds,
    ratio: quantile(
      rounds.map((r) => r.withLock / r.without),
      0.5,
    ),
  };
}

async function deliveryLatency(ctx: BenchContext): Promise<DeliveryLatency> {
  const samples = ctx.settings.quick ? 15 : 40;
  const b = await ctx.spawn(apiServer(ctx.settings, ctx.url, 'second API server'));
  const merchant = ctx.spareMerchant;
  const arrivals = new Map<string, number>();
  let buffer = '';
  let stream: http.ClientRequest | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      stream = http.get(
        `${ctx.api.url}/v1/partners/events/stream?merchantId=${merchant.merchantId}`,
        { headers: ctx.auth, agent: false },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            for (const match of buffer.matchAll(/"id":"(lat-[^"]+)"/g)) {
              if (match[1] && !arrivals.has(match[1])) arrivals.set(match[1], performance.now());
            }
            buffer = buffer.slice(Math.max(0, buffer.lastIndexOf('\n\n')));
          });
          resolve();
        },
      );
      stream.on('error', reject);
    });
    const run = randomBytes(3).toString('hex');
    const post: number[] = [];
    const delivered: number[] = [];
    for (let i = 0; i < samples; i++) {
      const id = `lat-${run}-${i}`;
      const started = performance.now();
      const res = await fetch(`${b.url}/v1/collect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tagId: merchant.tagId, events: [{ id, event_name: 'PageView' }] }),
      });
      await res.text();
      post.push(performance.now() - started);
      const deadline = Date.now() + 10_000;
      while (!arrivals.has(id)) {
        if (Date.now() > deadline) throw new Error(`stream: ${id} did not arrive within 10 s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      delivered.push((arrivals.get(id) as number) - started);
    }
    const result: DeliveryLatency = {
      samples,
      deliveredP50: quantile(delivered, 0.5),
      deliveredP95: quantile(delivered, 0.95),
      deliveredMax: Math.max(...delivered),
      postP50: quantile(post, 0.5),
      ratio: quantile(delivered, 0.5) / quantile(post, 0.5),
    };
    return result;
  } finally {
    stream?.destroy();
    await b.stop();
  }
}

export const stream: Section<StreamResult> = {
  title: 'Event stream',
  async run(ctx) {
    const lock = await lockCost(ctx);
    log(`  stream: ordering lock ${ratio(lock.ratio)} of the throughput without it`);
    const latency = await deliveryLatency(ctx);
    log(
      `  stream: B collect -> A stream p50 ${latency.deliveredP50.toFixed(1)} ms (${ratio(latency.ratio)} of the POST)`,
    );
    return { lock, latency };
  },
  targets() {
    return [];
  },
  report({ lock, latency }) {
    return [
      '## Event stream',
      '',
      `Ordering lock: ${lock.writers} writers x ${lock.statements} statements x ${lock.rows} rows; rows/s with / without the lock per round: ${lock.rounds.map((r) => `${Math.round(r.withLock)} / ${Math.round(r.without)}`).join(', ')}; median ratio ${ratio(lock.ratio)}.`,
      '',
      '| delivery, POST /v1/collect on B -> stream on A | p50 | p95 | max | POST p50 | delivered / POST (p50) |',
      '|---|---|---|---|---|---|',
      `| ${latency.samples} events | ${latency.deliveredP50.toFixed(1)} ms | ${latency.deliveredP95.toFixed(1)} ms | ${latency.deliveredMax.toFixed(1)} ms | ${latency.postP50.toFixed(1)} ms | ${ratio(latency.ratio)} |`,
      '',
    ];
  },
};
