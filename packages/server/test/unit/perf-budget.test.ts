// docs/performance-budget.md lists every speed-only departure from idiomatic code; each one is
// tagged where it lives. The table and the tags must agree, so none outlives its entry unseen.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const TAG = /perf-budget: ([a-z0-9-]+)/g;

function budgetRows(): Array<{ id: string; where: string }> {
  const text = readFileSync(path.join(ROOT, 'docs/performance-budget.md'), 'utf8');
  return [...text.matchAll(/^\| `([a-z0-9-]+)` +\| `([^`]+)`/gm)].map((m) => ({ id: m[1] ?? '', where: m[2] ?? '' }));
}

function taggedIds(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const dirs = ['packages/server/src', 'packages/sdk/src', 'packages/shared-schemas/src'];
  const files = dirs.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name))
      .map((e) => path.join(e.parentPath, e.name)),
  );
  files.push(path.join(ROOT, 'packages/server/tsup.config.ts'));
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(TAG)) {
      const id = match[1] ?? '';
      found.set(id, [...(found.get(id) ?? []), path.relative(ROOT, file)]);
    }
  }
  return found;
}

describe('performance budget (docs/performance-budget.md)', () => {
  const rows = budgetRows();
  const tags = taggedIds();

  it('reads a non-empty table', () => {
    expect(rows.length).toBeGreaterThanOrEqual(4);
  });

  it('every patch in the table is applied by the workspace and exists', () => {
    const workspace = readFileSync(path.join(ROOT, 'pnpm-workspace.yaml'), 'utf8');
    for (const { where } of rows.filter((row) => row.where.startsWith('patches/'))) {
      expect(existsSync(path.join(ROOT, where)), where).toBe(true);
      expect(workspace, where).toContain(where);
    }
  });

  it('every code spot in the table is tagged where the table says', () => {
    for (const { id, where } of rows.filter((row) => !row.where.startsWith('patches/'))) {
      expect(tags.get(id) ?? [], id).toContain(where);
    }
  });

  it('every tag in code has its row', () => {
    const ids = new Set(rows.map((row) => row.id));
    expect([...tags.keys()].filter((id) => !ids.has(id))).toEqual([]);
  });
});
