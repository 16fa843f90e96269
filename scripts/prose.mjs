#!/usr/bin/env node
// How much prose the repository carries (issue 54): README words, Markdown words outside the bench
// results, and the share of comment lines in the server's source.
//   node scripts/prose.mjs            print the three figures
//   node scripts/prose.mjs --check    also exit 1 when one is past its budget (CI)
// Words are whitespace-separated runs (as `wc -w`). Files are the tracked and new, not ignored ones.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUDGETS = { readmeWords: 2000, markdownWords: 40_000, serverCommentShare: 0.12 };

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file && existsSync(path.join(ROOT, file)));
const read = (file) => readFileSync(path.join(ROOT, file), 'utf8');
const words = (text) => text.split(/\s+/).filter(Boolean).length;

/** Comment lines (whole line inside `//` or `/* *\/`) and non-blank lines of a JS/TS source. */
function commentLines(text) {
  let comments = 0;
  let nonBlank = 0;
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    nonBlank++;
    if (inBlock) {
      comments++;
      if (line.includes('*/')) inBlock = false;
    } else if (line.startsWith('//')) {
      comments++;
    } else if (line.startsWith('/*')) {
      comments++;
      inBlock = !line.includes('*/', 2);
    }
  }
  return { comments, nonBlank };
}

const readmeWords = words(read('README.md'));
const markdownWords = files
  .filter((file) => file.endsWith('.md') && !file.startsWith('bench/results/'))
  .reduce((sum, file) => sum + words(read(file)), 0);
const server = files
  .filter((file) => file.startsWith('packages/server/src/') && /\.(ts|mts|cts|js|mjs|cjs)$/.test(file))
  .map((file) => commentLines(read(file)))
  .reduce((a, b) => ({ comments: a.comments + b.comments, nonBlank: a.nonBlank + b.nonBlank }), {
    comments: 0,
    nonBlank: 0,
  });
const serverCommentShare = server.comments / server.nonBlank;

const rows = [
  ['README.md words', readmeWords, BUDGETS.readmeWords, readmeWords <= BUDGETS.readmeWords],
  [
    'Markdown words (outside bench/results)',
    markdownWords,
    BUDGETS.markdownWords,
    markdownWords <= BUDGETS.markdownWords,
  ],
  [
    `packages/server/src comment lines (${server.comments} of ${server.nonBlank} non-blank)`,
    `${(serverCommentShare * 100).toFixed(1)}%`,
    `${BUDGETS.serverCommentShare * 100}%`,
    serverCommentShare <= BUDGETS.serverCommentShare,
  ],
];
for (const [name, value, budget, ok] of rows)
  console.log(`${ok ? 'ok  ' : 'OVER'} ${name}: ${value} (budget ${budget})`);

if (process.argv.includes('--check') && rows.some((row) => !row[3])) process.exit(1);
