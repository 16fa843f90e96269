import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  // The shared schemas are private and source-only: bundle the zod-free `/normalize` helper in.
  noExternal: ['@partner/shared-schemas'],
  define: { __SDK_VERSION__: JSON.stringify(version) },
});
