// The examples run the SDK from its source, so nothing needs building first: their `start` runs
// tsx with ../tsconfig.sdk-source.json (its `paths` maps `@partner/sdk` to packages/sdk/src) and
// imports this file first, which sets the version constant tsup defines in a build.
import { readFileSync } from 'node:fs';

const sdk = JSON.parse(readFileSync(new URL('../packages/sdk/package.json', import.meta.url), 'utf8'));
globalThis.__SDK_VERSION__ = sdk.version;
