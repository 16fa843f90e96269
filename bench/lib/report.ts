import fs from 'node:fs';
import path from 'node:path';
import { ON_REQUEST_ONLY, SECTION_NAMES, type Settings } from './config.js';

/** Writes `bench-<stamp>.md`, `bench-<stamp>.json` (git-ignored) and `latest.md` under `outDir`. */
export function writeReport(settings: Settings, stamp: string, markdown: string, json: unknown): string {
  fs.mkdirSync(settings.outDir, { recursive: true });
  const md = path.join(settings.outDir, `bench-${stamp}.md`);
  fs.writeFileSync(md, markdown);
  fs.writeFileSync(path.join(settings.outDir, `bench-${stamp}.json`), `${JSON.stringify(json, null, 2)}\n`);
  // A partial run (--section) does not replace the last full table (the on-request sections aside).
  if (SECTION_NAMES.every((name) => ON_REQUEST_ONLY.includes(name) || settings.sections.includes(name)))
    fs.writeFileSync(path.join(settings.outDir, 'latest.md'), markdown);
  return md;
}
