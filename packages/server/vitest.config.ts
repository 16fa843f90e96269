import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Tests that drive the SDK import its sources (../sdk/src), never its build: `pnpm test` works on a
// fresh clone with nothing built. The SDK's version constant is defined at build time (tsup), so
// it is defined here the same way.
const sdk = JSON.parse(readFileSync(new URL('../sdk/package.json', import.meta.url), 'utf8')) as { version: string };

const ALONE = [
  'test/security/stats-read-concurrency.test.ts',
  'test/security/unique-value-flood.test.ts',
  'test/security/nul-in-event-data.test.ts',
  'test/security/zone-case-variants.test.ts',
  'test/security/tenant-fairness.test.ts',
];

export default defineConfig({
  define: { __SDK_VERSION__: JSON.stringify(sdk.version) },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Most of an integration file's time is waiting (outages, timers, other processes): four files at
    // a time suit two cores (figures in test/README.md). TEST_WORKERS overrides it on a bigger machine.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 4),
    pool: 'forks',
    // With TEST_DATABASE_URL: one migrated template database per run (globalSetup) and a copy of it
    // per test file (setupFiles of the projects with a database), src/testing/test-database.ts.
    globalSetup: ['test/setup/pg-template.ts'],
    // TEST_REPORT=<file>: a JSON report beside the usual output, for scripts/test-times.mjs (CI's tier times).
    ...(process.env.TEST_REPORT
      ? { reporters: ['default', 'json'], outputFile: { json: process.env.TEST_REPORT } }
      : {}),
    // Four tiers (`pnpm test` runs all; `test:unit` / `test:fast` / `test:integration` / `test:system`
    // one): unit = pure logic, no database or socket; fast = createCaller in-process; integration =
    // the app over real HTTP; system = several processes, a browser, outages, fuzzing, bench smokes.
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // fast = use cases and procedures through createCaller on one database per file, no HTTP (test/README.md);
      // its files in one worker, one after another, sharing the loaded modules: the least CPU on shared cores
      // (a group of its own, after the others, in a whole run: vitest groups projects by maxWorkers).
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/fast/**/*.test.ts'],
          setupFiles: ['test/setup/file-database.ts'],
          isolate: false,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: 'system', include: ['test/system/**/*.test.ts'], setupFiles: ['test/setup/file-database.ts'] },
      },
      // Files that bound another partner's latency or the process's memory under a load they make
      // themselves: alone, after the rest, so that the suite's own load is not what they measure.
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          setupFiles: ['test/setup/file-database.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', 'test/system/**', 'test/fast/**', ...ALONE, '**/node_modules/**'],
          setupFiles: ['test/setup/file-database.ts'],
        },
      },
    ],
  },
});
