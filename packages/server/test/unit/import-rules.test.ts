// The layer rules of docs/ARCHITECTURE.md, held by dependency-cruiser (/.dependency-cruiser.cjs, also
// `pnpm check:deps` in CI): every import of every file under packages/*/src is resolved and checked,
// transitively where a rule says "reaches". A new file is covered as soon as it exists.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const SERVER_SRC = 'packages/server/src';

/** Cruises `dirs` (relative to `baseDir`) with the repository's rules. */
async function cruiseWithRules(baseDir: string, dirs: string[]): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(path.join(ROOT, '.dependency-cruiser.cjs'));
  const tsConfig = extractTSConfig(path.join(ROOT, '.dependency-cruiser.tsconfig.json'));
  const { output } = await cruise(dirs, { ...options, baseDir }, {}, { tsConfig });
  if (typeof output === 'string') throw new Error(`dependency-cruiser returned text: ${output}`);
  return output;
}

const show = (violations: IViolation[]) =>
  violations.map((v) =>
    [`${v.rule.name}: ${v.from} -> ${v.to}`, ...(v.cycle ?? v.via ?? []).map((step) => step.name)].join(' > '),
  );

describe('import rules (docs/ARCHITECTURE.md, .dependency-cruiser.cjs)', () => {
  let tree: ICruiseResult;
  beforeAll(async () => {
    const sources = readdirSync(path.join(ROOT, 'packages'))
      .map((name) => `packages/${name}/src`)
      .filter((dir) => existsSync(path.join(ROOT, dir)));
    tree = await cruiseWithRules(ROOT, sources);
  }, 60_000);

  it('no file of packages/*/src breaks a rule or is part of an import cycle', () => {
    expect(show(tree.summary.violations)).toEqual([]);
  });

  it('the error table (kernel/errors.ts) never imports tRPC: its codes are mapped in src/routes/procedures.ts only', () => {
    const errors = tree.modules.find((m) => m.source === `${SERVER_SRC}/kernel/errors.ts`);
    expect(errors).toBeDefined();
    expect(errors?.dependencies.filter((d) => d.module.startsWith('@trpc/')).map((d) => d.module)).toEqual([]);
  });

  it('reads the sources it checks (the rules are not vacuous)', () => {
    const importsOf = (dir: string) =>
      tree.modules.filter((m) => m.source.startsWith(`${SERVER_SRC}/${dir}/`)).flatMap((m) => m.dependencies);
    expect(importsOf('routes').length).toBeGreaterThan(20);
    expect(importsOf('features').some((d) => d.module.startsWith('drizzle-orm'))).toBe(true);
    expect(importsOf('transport').some((d) => d.resolved.startsWith(`${SERVER_SRC}/features/`))).toBe(true);
    expect(tree.modules.some((m) => m.source.startsWith('packages/sdk/src/'))).toBe(true);
    expect(tree.modules.some((m) => m.source.startsWith('packages/shared-schemas/src/'))).toBe(true);
  });
});

describe('the import rules bite (planted breaks in a copy of the layout)', () => {
  let dir: string;
  let planted: ICruiseResult;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'import-rules-'));
    const files: Record<string, string> = {
      'kernel/cycle-a.ts': "import { b } from './cycle-b.js';\nexport const a = (): number => b() + 1;\n",
      'kernel/cycle-b.ts': "import { a } from './cycle-a.js';\nexport const b = (): number => a() - 1;\n",
      // A procedure that reaches transport/ only through a use case.
      'routes/x.ts': "import { y } from '../features/y.js';\nexport const x = y;\n",
      'features/y.ts': "import { z } from '../transport/z.js';\nexport const y = z;\n",
      'transport/z.ts': 'export const z = 1;\n',
      // A runtime part that names a use case's type (type-only imports count).
      'runtime/w.ts': "import type { V } from '../features/v.js';\nexport const w = (v: V): number => v;\n",
      'features/v.ts': 'export type V = number;\n',
    };
    for (const [file, text] of Object.entries(files)) {
      const target = path.join(dir, SERVER_SRC, file);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
    planted = await cruiseWithRules(dir, [SERVER_SRC]);
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports the planted cycle', () => {
    const cycles = planted.summary.violations.filter((v) => v.rule.name === 'no-circular');
    expect(cycles.map((v) => [v.from, ...(v.cycle ?? []).map((step) => step.name)])).toEqual([
      [`${SERVER_SRC}/kernel/cycle-a.ts`, `${SERVER_SRC}/kernel/cycle-b.ts`, `${SERVER_SRC}/kernel/cycle-a.ts`],
    ]);
  });

  it('reports runtime/ importing features/, even a type only', () => {
    const reverse = planted.summary.violations.filter((v) => v.rule.name === 'runtime-never-imports-features');
    expect(reverse.map((v) => [v.from, v.to])).toEqual([[`${SERVER_SRC}/runtime/w.ts`, `${SERVER_SRC}/features/v.ts`]]);
  });

  it('reports a procedure that reaches transport/ through another file', () => {
    const procedure = planted.modules.find((m) => m.source === `${SERVER_SRC}/routes/x.ts`);
    expect(procedure?.dependencies.map((d) => d.resolved)).toEqual([`${SERVER_SRC}/features/y.ts`]);
    const reached = planted.summary.violations.filter((v) => v.rule.name === 'routes-never-reach-transport');
    expect(reached.map((v) => [v.from, v.to])).toEqual([[`${SERVER_SRC}/routes/x.ts`, `${SERVER_SRC}/transport/z.ts`]]);
    expect(reached[0]?.via?.map((step) => step.name)).toEqual([
      `${SERVER_SRC}/features/y.ts`,
      `${SERVER_SRC}/transport/z.ts`,
    ]);
  });
});
