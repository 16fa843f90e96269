import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FuzzTarget, runFuzz, setupFuzzTarget } from '../../scripts/lib/fuzz.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';

// The small run of the property-based fuzzer; `pnpm fuzz` runs the full >= 10,000 inputs.
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

let server: TestServer;
let target: FuzzTarget;
beforeAll(async () => {
  server = await startTestServer();
  target = await setupFuzzTarget(server);
});
afterAll(() => server?.close());

describe('fuzzing every endpoint over HTTP', () => {
  it(`answers ${RUNS} generated bad requests without a 5xx, with { message, code } errors and no other partner's data`, async () => {
    const report = await runFuzz(target, RUNS);
    expect(report.inputs).toBeGreaterThanOrEqual(RUNS);
    expect(report.fiveXx).toBe(0);
    // Every endpoint got inputs, and most were rejected (the generator aims at bad input).
    expect(Object.keys(report.byEndpoint).length).toBeGreaterThanOrEqual(8);
    const rejected = Object.entries(report.byStatus)
      .filter(([status]) => Number(status) >= 400)
      .reduce((n, [, count]) => n + count, 0);
    expect(rejected / report.inputs).toBeGreaterThan(0.5);
  }, 120_000);

  it('still serves partner A normally afterwards', async () => {
    const res = await fetch(`${server.url}/v1/partners/merchant?limit=1`, {
      headers: { authorization: `Bearer ${target.keyA}` },
    });
    expect(res.status).toBe(200);
  });
});
