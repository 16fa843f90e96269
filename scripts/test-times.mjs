#!/usr/bin/env node
// Each tier's wall time and the ten slowest files of a vitest run, from its JSON report
// (`vitest run --reporter=json --outputFile=...`). `--budget tier=seconds` (repeatable) exits 1
// when a tier took longer: a slow test shows up in the run that made it slow, not weeks later.
//   node scripts/test-times.mjs .ci/artifacts/tests-pglite.json --budget fast=120 --budget integration=300
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { budget: { type: 'string', multiple: true, default: [] }, top: { type: 'string', default: '10' } },
});
if (positionals.length !== 1) {
  console.error('usage: test-times.mjs <vitest-report.json> [--budget tier=seconds]... [--top n]');
  process.exit(2);
}

/** The tier of a test file, as the projects of packages/server/vitest.config.ts draw them. */
const tierOf = (file) => /\/test\/(unit|fast|system)\//.exec(file)?.[1] ?? 'integration';

const report = JSON.parse(readFileSync(positionals[0], 'utf8'));
const files = report.testResults.map((result) => ({
  file: relative(process.cwd(), result.name),
  tier: tierOf(result.name),
  ms: result.endTime - result.startTime,
  start: result.startTime,
  end: result.endTime,
}));

const tiers = new Map();
for (const f of files) {
  const t = tiers.get(f.tier) ?? { files: 0, start: Number.POSITIVE_INFINITY, end: 0, busy: 0 };
  t.files += 1;
  t.start = Math.min(t.start, f.start);
  t.end = Math.max(t.end, f.end);
  t.busy += f.ms;
  tiers.set(f.tier, t);
}
const seconds = (ms) => (ms / 1000).toFixed(1);
console.log('tier         files   wall s   file-time s');
for (const [tier, t] of [...tiers].sort((a, b) => a[1].start - b[1].start)) {
  console.log(
    `${tier.padEnd(12)} ${String(t.files).padStart(5)} ${seconds(t.end - t.start).padStart(8)} ${seconds(t.busy).padStart(13)}`,
  );
}
console.log(`\nthe ${values.top} slowest files`);
for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, Number(values.top))) {
  console.log(`${seconds(f.ms).padStart(8)} s  ${f.tier.padEnd(12)} ${f.file}`);
}

let over = 0;
for (const spec of values.budget) {
  const [tier, limit] = spec.split('=');
  const t = tiers.get(tier);
  if (!t) continue;
  const wall = (t.end - t.start) / 1000;
  if (wall > Number(limit)) {
    console.error(`BUDGET EXCEEDED: the ${tier} tier took ${wall.toFixed(1)} s, its budget is ${limit} s`);
    over += 1;
  }
}
process.exit(over > 0 ? 1 : 0);
