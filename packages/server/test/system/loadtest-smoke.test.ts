import { describe, expect, it } from 'vitest';
import { runLoadtest } from '../../scripts/lib/loadtest.js';

// A 2-second smoke run of `pnpm loadtest` (which runs 60 s at 64 connections): the harness works
// end to end and mixed traffic completes without a single failed request. No timing is asserted.
describe('loadtest smoke', () => {
  it('runs mixed reads and writes against a server process with no failed request', async () => {
    const report = await runLoadtest({
      durationSeconds: 2,
      connections: 4,
      warmupSeconds: 0,
      database: 'postgres', // a scratch database when 127.0.0.1:5432 answers, else PGlite
    });
    expect(report.requests).toBeGreaterThan(0);
    expect(report.errors).toBe(0);
    expect(report.timeouts).toBe(0);
    expect(report.non2xx).toBe(0);
    expect(Object.keys(report.mix).length).toBeGreaterThanOrEqual(3);
    expect(report.rssMb.start).toBeGreaterThan(0);
  }, 90_000);
});
