/**
 * `pnpm loadtest`: 60 s of mixed reads and writes at 64 connections against a real server
 * process on loopback (autocannon), after a 15 s warm-up at full load (V8 sizes its heap in the
 * first seconds, so RSS "at start" is read once it is steady: see docs/decisions/performance.md). Prints
 * throughput, p50/p99 latency,
 * errors and the server's RSS at start and end as JSON; exits 1 when any request failed or RSS
 * grew by more than 20%. LOADTEST_DURATION, LOADTEST_CONNECTIONS, LOADTEST_WARMUP and
 * LOADTEST_DB (postgres | pglite; default postgres when 127.0.0.1:5432 answers) override.
 */
import { runLoadtest } from './lib/loadtest.js';

const report = await runLoadtest({
  durationSeconds: Number(process.env.LOADTEST_DURATION ?? 60),
  connections: Number(process.env.LOADTEST_CONNECTIONS ?? 64),
  warmupSeconds: Number(process.env.LOADTEST_WARMUP ?? 15),
  database: process.env.LOADTEST_DB === 'pglite' ? 'pglite' : 'postgres',
});
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
const failed = report.errors + report.timeouts + report.non2xx;
const flat = Math.abs(report.rssMb.changePercent) <= 20;
process.stdout.write(
  `\n${failed === 0 ? 'OK' : 'FAIL'}: ${failed} failed requests; RSS ${report.rssMb.start} -> ${report.rssMb.end} MB (${report.rssMb.changePercent}%, ${flat ? 'flat' : 'NOT flat'} within 20%)\n`,
);
process.exit(failed === 0 && flat ? 0 : 1);
