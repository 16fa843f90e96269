/**
 * `pnpm fuzz`: the full property-based fuzz run (default 10,000 generated requests over HTTP against
 * a real server on loopback, PGlite in memory or TEST_DATABASE_URL). Prints the figures as JSON.
 * FUZZ_RUNS and FUZZ_SEED override the count and the seed.
 */
import { startTestServer } from '../src/testing/index.js';
import { runFuzz, setupFuzzTarget } from './lib/fuzz.js';

const runs = Number(process.env.FUZZ_RUNS ?? 10_000);
const seed = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
const server = await startTestServer();
let exitCode = 0;
try {
  const target = await setupFuzzTarget(server);
  process.stdout.write(`fuzzing ${runs} inputs against ${server.url} (seed ${seed})...\n`);
  const report = await runFuzz(target, runs, seed);
  process.stdout.write(
    `${JSON.stringify({ ...report, seed, database: server.app.database.driver, inputsPerSecond: Math.round(report.inputs / (report.ms / 1000)) }, null, 2)}\n`,
  );
} catch (error) {
  const clip = (text: string) => (text.length > 3000 ? `${text.slice(0, 3000)}... (${text.length} chars)` : text);
  const cause =
    error instanceof Error && error.cause instanceof Error ? `\ncaused by: ${clip(error.cause.message)}` : '';
  process.stderr.write(`${clip(error instanceof Error ? error.message : String(error))}${cause}\n(seed ${seed})\n`);
  exitCode = 1;
} finally {
  await server.close();
}
process.exit(exitCode);
