// The README and docs/ARCHITECTURE.md name what exists (issue 13 item 9): the README links the settings
// page and keeps no settings table of its own; every top-level folder of the repository is in the
// repository table and every path there exists; every source file ARCHITECTURE.md names exists.
// Read from the files as committed, so a rename fails here.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/kernel/settings.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The first cells (backquoted) of the table that follows `heading` in the README. */
function firstColumn(heading: string): string[] {
  const start = README.indexOf(`\n${heading}\n`);
  expect(start, `README has a "${heading}" section`).toBeGreaterThan(-1);
  const section = README.slice(start + heading.length + 2);
  const end = section.search(/\n#{1,2} /);
  const rows = (end === -1 ? section : section.slice(0, end)).split('\n').filter((line) => line.startsWith('| `'));
  return rows.map((row) => (/^\| `([^`]+)`/.exec(row) as RegExpExecArray)[1] as string);
}

/** Tracked files (a clean clone's view: nothing ignored or generated). */
const TRACKED = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

describe('README configuration', () => {
  it('links the settings page (docs/settings.md, generated from the settings schema)', () => {
    const start = README.indexOf('\n## Configuration\n');
    expect(start, 'README has a "## Configuration" section').toBeGreaterThan(-1);
    expect(README.slice(start)).toContain('](docs/settings.md)');
  });

  it('keeps no settings table of its own (one list of settings, generated from kernel/settings.ts)', () => {
    const settings = new Set(Object.keys(SETTINGS));
    const rows = README.split('\n').filter((line) => settings.has(/^\| `([^`]+)`/.exec(line)?.[1] ?? ''));
    expect(rows).toEqual([]);
  });
});

describe('README repository table', () => {
  const rows = firstColumn('## Repository');

  it('names every top-level folder of the repository', () => {
    const folders = [...new Set(TRACKED.filter((file) => file.includes('/')).map((file) => file.split('/')[0]))];
    const covered = (folder: string) => rows.some((row) => row === `${folder}/` || row.startsWith(`${folder}/`));
    expect(folders.filter((folder) => !covered(folder as string))).toEqual([]);
  });

  it('names only paths that exist', () => {
    expect(rows.filter((row) => !existsSync(path.join(ROOT, row)))).toEqual([]);
  });
});

describe('docs/ARCHITECTURE.md', () => {
  const text = readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  // Source files named with at least one folder (`transport/rest/rest-handler.ts`, `runtime/keys/api-keys.ts`, ...);
  // placeholders such as `routes/<area>/<verb>.ts` are patterns, not files; `dist/` is built output.
  const named = [
    ...new Set([...text.matchAll(/[\w.-]+(?:\/[\w.-]+)+\.(?:ts|mjs|js)\b/g)].map((match) => match[0])),
  ].filter((name) => !name.startsWith('dist/'));

  it('names source files', () => {
    expect(named.length).toBeGreaterThan(20);
  });

  it('names only files that exist (at the repository root, or under a package or its src/)', () => {
    const exists = (name: string) =>
      TRACKED.some((file) => file === name || file.endsWith(`/${name}`)) ||
      TRACKED.some((file) => file.endsWith(`/src/${name}`));
    expect(named.filter((name) => !exists(name))).toEqual([]);
  });
});
