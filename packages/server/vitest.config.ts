import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Tests that drive the SDK import its sources (../sdk/src), never its build: `pnpm test` works on a
// fresh clone with nothing built. The SDK's version constant is defined at build time (tsup), so
// it is defined here the same way.
const sdk = JSON.parse(readFileSync(new URL('../sdk/package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  define: { __SDK_VERSION__: JSON.stringify(sdk.version) },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starts its own server and database; two at a time fits two cores.
    maxWorkers: 2,
    pool: 'forks',
  },
});
