import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starts its own server and database; two at a time fits two cores.
    maxWorkers: 2,
    pool: 'forks',
  },
});
