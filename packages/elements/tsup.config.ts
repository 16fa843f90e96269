import { defineConfig } from 'tsup';
import { bundle } from './tsup.bundle.config.js';

export default defineConfig([
  // The package's entry for an app's bundler: @partner/sdk and uplot stay dependencies.
  {
    entry: ['src/index.ts'],
    format: ['esm'],
    dts: true,
    sourcemap: true,
    target: 'es2022',
    platform: 'browser',
  },
  bundle,
]);
