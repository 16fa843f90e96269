import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

const sdkDir = fileURLToPath(new URL('../sdk/', import.meta.url));
const { version } = JSON.parse(readFileSync(`${sdkDir}package.json`, 'utf8')) as { version: string };

/**
 * One file for a plain `<script type="module">`: the element, the SDK and uPlot, minified. The SDK
 * comes from its source (nothing needs building first); the size budget is measured on this file.
 */
export const bundle: Options = {
  entry: { 'partner-tags-dashboard': 'src/index.ts' },
  outExtension: () => ({ js: '.bundle.js' }),
  format: ['esm'],
  minify: true,
  target: 'es2022',
  platform: 'browser',
  noExternal: [/.*/],
  // One file: the SDK's lazily imported ky is inlined rather than split into a chunk.
  splitting: false,
  define: { __SDK_VERSION__: JSON.stringify(version) },
  esbuildOptions(options) {
    options.alias = { '@partner/sdk': `${sdkDir}src/index.ts` };
  },
};

export default defineConfig(bundle);
