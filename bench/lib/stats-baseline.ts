/**
 * The statistics of 08df871 (the last build before ClickHouse: aggregates in PostgreSQL, folded
 * from `stat_pending`) in the same run as ours: its compiled server on a database of its own
 * (lib/refs.ts), the same seeded events (lib/seed.ts is deterministic: the same steps give the
 * same events, merchant and tag ids aside), queued in `stat_pending` as collector batches would
 * be and folded by that server's own fold loop, then the target shapes through its API.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { BENCH_DIR, type BenchContext } from './context.js';
import { request } from './http.js';
import { log } from './log.js';
import { runStamp, startTarget, worktreeFor } from './refs.js';
import { seedEvents } from './seed.js';
import { int, type Latency, latency, since } from './stats.js';
import { type Answer, answerOf, apiPath, Checker, type Dates, type ShapeKey, TARGET_SHAPES } from './stats-answers.js';

export const STATS_BASELINE_REF = '08df871';
/** Events per `stat_pending` range: a collector batch's size. */
const RANGE_EVENTS = 500;

export interface BaselineResult {
  ref: string;
  sha: string;
  events: number;
  seedSeconds: number;
  /** From the ranges queued until `stat_pending` is empty (the server's fold loop). */
  foldSeconds: number;
  foldMsPer1k: number;
  shapes: Array<{ key: ShapeKey; label: string; api: Latency }>;
  /** Its answers against our raw truth of the same events (no target: timing is what it is here for). */
  compared: number;
  mismatches: string[];
  visitorsMaxError: number;
  error?: string;
}

/**
 * Runs the baseline; `truth(key, i)` is the exact answer for merchant index i (ours: the same
 * events). A failure is reported in the result, not thrown: the rest of the section stands.
 */
export async function runStatsBaseline(
  ctx: BenchContext,
  d: Dates,
  truth: (key: ShapeKey, merchantIndex: number) => Answer | undefined,
): Promise<BaselineResult> {
  const result: BaselineResult = {
    ref: STATS_BASELINE_REF,
    sha: '',
    events: ctx.perMerchant() * ctx.merchants.length,
    seedSeconds: Number.NaN,
    foldSeconds: Number.NaN,
    foldMsPer1k: Number.NaN,
    shapes: [],
    compared: 0,
    mismatches: [],
    visitorsMaxError: 0,
  };
  let target: Awaited<ReturnType<typeof startTarget>> | undefined;
  let db: postgres.Sql | undefined;
  try {
    const { dir, sha } = worktreeFor(path.resolve(BENCH_DIR, '..'), STATS_BASELINE_REF);
    result.sha = sha;
    target = await startTarget(ctx, 'baseline', path.join(dir, 'packages/server'), runStamp(), false, {
      section: 'stats',
      merchants: ctx.merchants.length,
      processes: 1,
      // Its default, said outright: every process of that build folds.
      env: { STATS_FOLD: 'on' },
    });
    const merchants = target.merchantIds.map((merchantId, i) => ({ merchantId, tagId: target?.tagIds[i] as string }));
    db = postgres(target.databaseUrl, { max: 1, onnotice: () => {} });
    // The same seeds, step by step, as the bench database had them.
    const seedStart = process.hrtime.bigint();
    let first = 0;
    for (const step of ctx.seedSteps()) {
      // 08df871 has no `events.client` (migration 0038).
      await seedEvents(db, merchants, step, `seed (${STATS_BASELINE_REF})`, first, false);
      first += step;
    }
    await db`vacuum (analyze) events`;
    await db`vacuum (analyze) event_day_counts`;
    result.seedSeconds = since(seedStart) / 1000;
    // The seed is COPYed past storeEvents: its seq ranges queued as storeEvents queues a batch's,
    // merchants interleaved by range, with their time bounds (the fold reads only those months).
    const foldStart = process.hrtime.bigint();
    await db`insert into stat_pending (merchant_id, first_seq, last_seq, first_time, last_time)
      select merchant_id, min(seq), max(seq), min(event_time), max(event_time)
      from (select merchant_id, seq, event_time,
          (row_number() over (partition by merchant_id order by seq) - 1) / ${RANGE_EVENTS} as chunk
        from events) x
      group by merchant_id, chunk order by chunk, merchant_id`;
    const pending = async () => Number((await db!`select count(*)::int as n from stat_pending`)[0]?.n);
    // About 105 ms per 1,000 events when last measured: a deadline far past that.
    const deadline = Date.now() + Math.max(600_000, result.events * 1);
    let lastLog = Date.now();
    for (let left = await pending(); left > 0; left = await pending()) {
      if (Date.now() > deadline) throw new Error(`${left} ranges still pending in stat_pending`);
      if (Date.now() - lastLog > 30_000) {
        log(`  stats ${STATS_BASELINE_REF}: ${int(left)} ranges of ${RANGE_EVENTS} events left to fold`);
        lastLog = Date.now();
      }
      await sleep(500);
    }
    result.foldSeconds = since(foldStart) / 1000;
    result.foldMsPer1k = (result.foldSeconds * 1e6) / result.events;
    log(
      `  stats ${STATS_BASELINE_REF}: seeded in ${result.seedSeconds.toFixed(1)} s, folded in ${result.foldSeconds.toFixed(1)} s (${result.foldMsPer1k.toFixed(1)} ms per 1k events)`,
    );
    await db`vacuum (analyze)`;
    const headers = { authorization: `Bearer ${target.apiKey}` };
    const check = new Checker();
    for (const shape of TARGET_SHAPES) {
      const times: number[] = [];
      for (let i = 0; i < ctx.settings.reps + 3; i++) {
        const m = i % merchants.length;
        const started = process.hrtime.bigint();
        const res = await request(`${target.server.url}${apiPath(shape, merchants[m]?.merchantId as string, d)}`, {
          headers,
        });
        const elapsed = since(started);
        if (res.status !== 200)
          throw new Error(`${STATS_BASELINE_REF} ${shape.key}: ${res.status} ${res.body.slice(0, 200)}`);
        if (i >= 3) times.push(elapsed);
        const exact = truth(shape.key, m);
        if (exact) check.compare(`${STATS_BASELINE_REF} ${shape.key} #${m}`, answerOf(shape, res.body), exact);
      }
      const api = latency(times);
      result.shapes.push({ key: shape.key, label: shape.label, api });
      log(
        `  stats ${STATS_BASELINE_REF} ${shape.label}: API p50 ${api.p50.toFixed(1)} ms, p95 ${api.p95.toFixed(1)} ms`,
      );
    }
    result.compared = check.compared;
    result.mismatches = check.mismatches;
    result.visitorsMaxError = check.visitorsMaxError;
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    log(`  stats: the ${STATS_BASELINE_REF} baseline failed: ${result.error}`);
  } finally {
    await db?.end({ timeout: 5 });
    if (target) {
      await target.server.stop().catch(() => {});
      await target.dropDatabase().catch(() => {});
    }
  }
  return result;
}
