/**
 * stream: (1) per-merchant ordering (migration 0008): concurrent writers on one merchant against
 * the same writers on their own merchants; (2) delivery latency
 * across two API processes on one database: `POST /v1/collect` on B until the event arrives on a
 * stream held on A, against the time of the POST itself.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { apiServer, type BenchContext } from '../lib/context.js';
import { log } from '../lib/log.js';
import { quantile, ratio } from '../lib/stats.js';
import type { Section } from './types.js';

interface OrderingCost {
  writers: number;
  statements: number;
  rows: number;
  rounds: { oneMerchant: number; ownMerchants: number }[];
  /** Median over rounds of rows/s, writers on one merchant / each writer on its own merchant. */
  ratio: number;
}

interface DeliveryLatency {
  samples: number;
  deliveredP50: number;
  deliveredP95: number;
  deliveredMax: number;
  postP50: number;
  /** Delivered p50 / POST p50. */
  ratio: number;
}

export interface StreamResult {
  ordering: OrderingCost;
  latency: DeliveryLatency;
}

/**
 * Per-merchant ordering (migration 0026): inserts without `seq` take their transaction's next
 * number, with no lock (readers stop below the horizon instead). 8 concurrent writers, each on
 * its own merchant, against the same 8 writers all on one merchant: writers of different
 * merchants must not wait for each other.
 */
async function orderingCost(ctx: BenchContext): Promise<OrderingCost> {
  const writers = 8;
  const statements = ctx.settings.quick ? 10 : 40;
  const rows = 100;
  const merchantIds = Array.from({ length: writers }, () => randomUUID());
  const tagId = randomUUID();
  const throughput = async (targets: string[]) => {
    const started = performance.now();
    await Promise.all(
      targets.map(async (merchantId) => {
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
  const rounds: OrderingCost['rounds'] = [];
  const one = Array.from({ length: writers }, () => merchantIds[0] as string);
  try {
    for (let round = 0; round < 3; round++) {
      const ownMerchants = await throughput(merchantIds);
      const oneMerchant = await throughput(one);
      rounds.push({ oneMerchant, ownMerchants });
    }
  } finally {
    await ctx.raw`delete from events where merchant_id = any(${merchantIds}::uuid[])`;
  }
  return {
    writers,
    statements,
    rows,
    rounds,
    ratio: quantile(
      rounds.map((r) => r.oneMerchant / r.ownMerchants),
      0.5,
    ),
  };
}

async function deliveryLatency(ctx: BenchContext): Promise<DeliveryLatency> {
  const samples = ctx.settings.quick ? 15 : 40;
  const b = await ctx.spawn(await apiServer(ctx.settings, ctx.url, 'second API server'));
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
    const ordering = await orderingCost(ctx);
    log(`  stream: 8 writers on one merchant ${ratio(ordering.ratio)} of 8 writers on their own merchants`);
    const latency = await deliveryLatency(ctx);
    log(
      `  stream: B collect -> A stream p50 ${latency.deliveredP50.toFixed(1)} ms (${ratio(latency.ratio)} of the POST)`,
    );
    return { ordering, latency };
  },
  targets() {
    return [];
  },
  report({ ordering, latency }) {
    return [
      '## Event stream',
      '',
      `Per-merchant ordering: ${ordering.writers} writers x ${ordering.statements} statements x ${ordering.rows} rows; rows/s with every writer on one merchant / each on its own, per round: ${ordering.rounds.map((r) => `${Math.round(r.oneMerchant)} / ${Math.round(r.ownMerchants)}`).join(', ')}; median ratio ${ratio(ordering.ratio)} (writers of one merchant commit one after another; of different merchants, side by side).`,
      '',
      '| delivery, POST /v1/collect on B -> stream on A | p50 | p95 | max | POST p50 | delivered / POST (p50) |',
      '|---|---|---|---|---|---|',
      `| ${latency.samples} events | ${latency.deliveredP50.toFixed(1)} ms | ${latency.deliveredP95.toFixed(1)} ms | ${latency.deliveredMax.toFixed(1)} ms | ${latency.postP50.toFixed(1)} ms | ${ratio(latency.ratio)} |`,
      '',
    ];
  },
};
