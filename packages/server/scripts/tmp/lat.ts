import { openClickhouse } from '../../src/db/clickhouse/client.js';
import { readPoints } from '../../src/features/stats/points.js';
import { readTopValues } from '../../src/features/stats/top-values.js';
import { pointStarts, statsRange, previousRange } from '../../src/features/stats/range.js';
async function main() {
  const [path, db, repsArg] = process.argv.slice(2);
  const reps = Number(repsArg ?? 40);
  const ch = await openClickhouse({ kind: 'chdb', path, database: db });
  const DAY = 86_400_000;
  const end = Math.floor(Date.now() / DAY) * DAY;
  const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);
  const merchants = Array.from({ length: 10 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`);
  const shapes: Record<string, (m: string) => Promise<unknown>> = {
    'NY 90d series': async (m) => {
      const r = statsRange(ymd(end - 90 * DAY), ymd(end - DAY), 'America/New_York');
      const starts = pointStarts(r, 'day');
      return readPoints(ch, { merchantId: m, start: r.start, end: r.end, names: [], cut: { interval: 'day', zone: r.timezone, firstDate: r.startDate } }, starts);
    },
    'summary 30d+prev': async (m) => {
      const r = statsRange(ymd(end - 30 * DAY), ymd(end - DAY), 'UTC');
      const b = previousRange(r);
      return readPoints(ch, { merchantId: m, start: b.start, end: r.end, names: [], cut: { splitAt: r.start } }, [r.start]);
    },
    'paths 30d top10': async (m) => {
      const r = statsRange(ymd(end - 30 * DAY), ymd(end - DAY), 'UTC');
      return readTopValues(ch, { merchantId: m, start: r.start, end: r.end, names: [], dimension: 'path', limit: 10 });
    },
  };
  for (const [name, run] of Object.entries(shapes)) {
    const times: number[] = [];
    for (let i = 0; i < reps + 3; i++) {
      const t = performance.now();
      await run(merchants[i % 10] as string);
      if (i >= 3) times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))]!.toFixed(1);
    console.log(name.padEnd(20), 'p50', q(0.5), 'p95', q(0.95));
  }
  await ch.close();
}
main();
