import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// A tiny run of `pnpm bench:ingest` (the real benchmark runs for 15 s at 64 senders, outside the
// suite). It needs PostgreSQL: it runs in the suite's PostgreSQL pass.
describe.skipIf(!process.env.TEST_DATABASE_URL)('pnpm bench:ingest (smoke, PostgreSQL pass only)', () => {
  it('runs for a second and prints events/s, p99 latency, the raw insert rate and their ratio', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/ingest.ts',
        '--duration=1',
        '--senders=4',
        '--batch=5',
        `--database-url=${process.env.TEST_DATABASE_URL}`,
      ],
      { cwd: SERVER_DIR, timeout: 60_000 },
    );
    expect(stdout).toMatch(/ingest events\/s\s+[\d,]+/);
    expect(stdout).toMatch(/accept latency p99 \(ms\)\s+[\d.]+/);
    expect(stdout).toMatch(/raw batched insert rows\/s .*\s+[\d,]+/);
    expect(stdout).toMatch(/ratio ingest \/ raw insert\s+[\d.]+/);
    const accepted = /events accepted \(202\)\s+([\d,]+)/.exec(stdout)?.[1];
    const stored = /events stored \(checked in the database\)\s+([\d,]+)/.exec(stdout)?.[1];
    expect(Number(accepted?.replaceAll(',', ''))).toBeGreaterThan(0);
    expect(stored).toBe(accepted);
  }, 90_000);
});
