import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from 'postgres';

export interface SustainedResult {
  callers: number;
  windowSeconds: number;
  /** Queries per second in each consecutive window. */
  windows: number[];
  /** Last window against the first: 1.00x when the driver does not slow down as load goes on. */
  ratio: number;
}

/**
 * The driver under sustained load: `callers` loops each sending `select 1` (prepared) through the
 * pool, more callers than connections as a busy API server has, for `windows` consecutive windows.
 * postgres.js 3.4.9 slowed down here as it went (its connection queue kept every shifted-out slot
 * and scanned them on each query: 27k then 5.5k queries/s after 40 s); patches/postgres@3.4.9.patch
 * fixes it, and this shows it stays fixed.
 */
export async function measureSustained(
  sql: Sql,
  options: { callers: number; windows: number; windowSeconds: number },
): Promise<SustainedResult> {
  let done = 0;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      await sql.unsafe('select 1', [], { prepare: true });
      done++;
    }
  };
  const loops = Array.from({ length: options.callers }, loop);
  const windows: number[] = [];
  try {
    for (let i = 0; i < options.windows; i++) {
      const before = done;
      await sleep(options.windowSeconds * 1000);
      windows.push((done - before) / options.windowSeconds);
    }
  } finally {
    stop = true;
    await Promise.all(loops);
  }
  const first = windows[0] ?? 0;
  const last = windows[windows.length - 1] ?? 0;
  return {
    callers: options.callers,
    windowSeconds: options.windowSeconds,
    windows,
    ratio: first > 0 ? last / first : 0,
  };
}
