// The budget of the standalone bundle (the element, the SDK and uPlot in one minified file): its
// gzipped size stays under 60 KB. Built here from the sources with the package's own tsup options.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'tsup';
import { afterAll, expect, it } from 'vitest';
import { bundle } from '../tsup.bundle.config.js';

const BUDGET_BYTES = 60 * 1024;
const outDir = mkdtempSync(path.join(tmpdir(), 'elements-size-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

it('gzips to under 60 KB with its chart library', async () => {
  await build({ ...bundle, outDir, silent: true });
  const code = readFileSync(path.join(outDir, 'partner-tags-dashboard.bundle.js'));
  const gzipped = gzipSync(code, { level: 9 }).byteLength;
  console.log(
    `partner-tags-dashboard.bundle.js: ${(code.byteLength / 1024).toFixed(1)} KB, gzipped ${(gzipped / 1024).toFixed(1)} KB`,
  );
  // The chart library is in it: uPlot's class names are in the file.
  expect(code.toString('utf8')).toContain('u-wrap');
  expect(code.toString('utf8')).toContain('partner-tags-dashboard');
  expect(gzipped).toBeLessThan(BUDGET_BYTES);
}, 60_000);
