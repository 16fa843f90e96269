#!/usr/bin/env node
// The longest functions of a source tree, by lines from signature to closing brace, read with the
// TypeScript compiler's parser (nested functions count on their own and inside their parent).
// Usage: node scripts/function-sizes.mjs [dir=packages/server/src] [--top N=10] [--max LINES]
// With --max, exits 1 when a function is longer (a budget CI can hold).
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.resolve('packages/server/package.json'));
const ts = require('typescript');

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const dir = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? 'packages/server/src';
const top = flag('--top', 10);
const max = flag('--max', undefined);

const files = readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && /\.(ts|mts)$/.test(e.name) && !e.name.endsWith('.d.ts') && !e.name.endsWith('.d.mts'))
  .map((e) => path.join(e.parentPath, e.name));

const found = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name?.getText(source) ?? parentName(node, source);
      found.push({ lines: end - start + 1, where: `${path.relative(process.cwd(), file)}:${start + 1}`, name });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

function parentName(node, source) {
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) {
    return parent.name.getText(source);
  }
  return '(anonymous)';
}

found.sort((a, b) => b.lines - a.lines);
console.log(`${files.length} files, ${found.length} functions; the ${Math.min(top, found.length)} longest:`);
for (const f of found.slice(0, top)) console.log(`${String(f.lines).padStart(5)}  ${f.name}  ${f.where}`);
const over = max === undefined ? [] : found.filter((f) => f.lines > max);
if (over.length > 0) {
  console.error(`${over.length} function(s) over ${max} lines`);
  process.exit(1);
}
