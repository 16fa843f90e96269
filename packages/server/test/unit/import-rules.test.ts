// The layer rules of docs/ARCHITECTURE.md, held by reading the sources: every import of every file
// is resolved and checked. A new file is covered as soon as it exists.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PACKAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SERVER_SRC = path.join(PACKAGES, 'server/src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => !file.includes(`${path.sep}script${path.sep}`)); // the browser tag script
}

/** Every module specifier a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers: string[] = [];
  const pattern =
    /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;
  for (const match of text.matchAll(pattern)) specifiers.push((match[1] ?? match[2] ?? match[3]) as string);
  return specifiers;
}

interface Import {
  file: string;
  specifier: string;
  /** The absolute path for relative specifiers; the package name otherwise. */
  target: string;
}

function importsUnder(dir: string): Import[] {
  return sourceFiles(dir).flatMap((file) =>
    importsOf(file).map((specifier) => ({
      file: path.relative(PACKAGES, file),
      specifier,
      target: specifier.startsWith('.') ? path.resolve(path.dirname(file), specifier) : specifier,
    })),
  );
}

const inside = (target: string, dir: string) => target === dir || target.startsWith(`${dir}${path.sep}`);
const show = (list: Import[]) => list.map((i) => `${i.file} imports ${i.specifier}`);

describe('import rules (docs/ARCHITECTURE.md)', () => {
  it('routers never import transports (transport/)', () => {
    const bad = importsUnder(path.join(SERVER_SRC, 'routers')).filter((i) =>
      inside(i.target, path.join(SERVER_SRC, 'transport')),
    );
    expect(show(bad)).toEqual([]);
  });

  it('the error table (kernel/errors.ts) never imports tRPC: its codes are mapped in src/routers/procedures.ts only', () => {
    const bad = importsOf(path.join(SERVER_SRC, 'kernel/errors.ts')).filter((specifier) =>
      specifier.startsWith('@trpc/'),
    );
    expect(bad).toEqual([]);
  });

  it('features never import @trpc/server or transports (transport/)', () => {
    const bad = importsUnder(path.join(SERVER_SRC, 'features')).filter(
      (i) => i.target.startsWith('@trpc/') || inside(i.target, path.join(SERVER_SRC, 'transport')),
    );
    expect(show(bad)).toEqual([]);
  });

  it('transports (transport/) never import db/schema or drizzle', () => {
    const bad = importsUnder(path.join(SERVER_SRC, 'transport')).filter(
      (i) => i.target.startsWith('drizzle-orm') || inside(i.target, path.join(SERVER_SRC, 'db/schema')),
    );
    expect(show(bad)).toEqual([]);
  });

  it('shared-schemas imports only zod (and its own files)', () => {
    const dir = path.join(PACKAGES, 'shared-schemas/src');
    const bad = importsUnder(dir).filter(
      (i) => !(i.target === 'zod' || i.target.startsWith('zod/') || inside(i.target, dir)),
    );
    expect(show(bad)).toEqual([]);
  });

  it('the SDK never imports the server', () => {
    const bad = importsUnder(path.join(PACKAGES, 'sdk/src')).filter(
      (i) => i.target.startsWith('@partner/server') || inside(i.target, path.join(PACKAGES, 'server')),
    );
    expect(show(bad)).toEqual([]);
  });

  it('reads the sources it checks (the rules are not vacuous)', () => {
    expect(importsUnder(path.join(SERVER_SRC, 'routers')).length).toBeGreaterThan(20);
    expect(importsUnder(path.join(SERVER_SRC, 'features')).some((i) => i.target.startsWith('drizzle-orm'))).toBe(true);
    expect(
      importsUnder(path.join(SERVER_SRC, 'transport')).some((i) => inside(i.target, path.join(SERVER_SRC, 'features'))),
    ).toBe(true);
  });
});
