import { cpSync, rmSync } from 'node:fs';
import { defineConfig } from 'tsup';

// The production build (`node dist/main.js`; tsx stays for development and tests). One ESM bundle
// of the server's own code and the workspace's shared schemas (their package exports TypeScript
// source); every npm dependency stays external, loaded from node_modules (patched ones included).
// Files the code reads next to itself by `import.meta.url` are copied beside the bundle: the SQL
// migrations (`./migrations`, ClickHouse's `./clickhouse-migrations`) and the tag script (`./script/tag.js`).
export default defineConfig({
  entry: { main: 'src/main.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  outDir: 'dist',
  clean: true,
  sourcemap: true,
  splitting: true,
  noExternal: ['@partner/shared-schemas'],
  // perf-budget: hot-list-trusted-output. The compiled server returns the hot lists' answers unparsed (src/routes/hot-list-output.ts).
  define: { __TRUST_HOT_LIST_OUTPUTS__: 'true', __CLICKHOUSE_MIGRATIONS__: '"./clickhouse-migrations"' },
  async onSuccess() {
    rmSync('dist/migrations', { recursive: true, force: true });
    cpSync('src/db/migrations', 'dist/migrations', { recursive: true });
    rmSync('dist/clickhouse-migrations', { recursive: true, force: true });
    cpSync('src/db/clickhouse/migrations', 'dist/clickhouse-migrations', { recursive: true });
    cpSync('src/transport/collector/script', 'dist/script', { recursive: true });
  },
});
