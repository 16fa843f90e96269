#!/usr/bin/env node
// The release pipeline, dry: what `pnpm changeset version` and `pnpm changeset publish` would do,
// without touching this checkout or the registry (CI step "release dry run"; needs `pnpm build`).
// 1. Only @partner/sdk, @partner/trpc and @partner/elements are publishable: every other workspace
//    package is private.
// 2. `changeset version` on a scratch copy of the manifests and .changeset/ (plus one test
//    changeset per public package) bumps them, writes their CHANGELOG.md, and versions no private
//    package.
// 3. `pnpm --filter <pkg> publish --dry-run` packs the real packages: dist (ESM, CJS, types),
//    README, LICENSE; no sources, tests or workspace: ranges (@partner/elements: ESM only, with its
//    standalone bundle). @partner/trpc is types only: its
//    JavaScript files are empty modules and its declaration imports nothing but @trpc/server.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PUBLIC = ['@partner/sdk', '@partner/trpc', '@partner/elements'];
/** What each tarball must hold besides package.json, README.md and LICENSE. */
const DIST = {
  '@partner/elements': ['dist/index.js', 'dist/index.d.ts', 'dist/partner-tags-dashboard.bundle.js'],
};
const DUAL = ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts'];
const failures = [];
const check = (ok, message) => {
  if (!ok) failures.push(message);
  process.stdout.write(`[release] ${ok ? 'ok  ' : 'FAIL'} ${message}\n`);
};
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

const dirs = ['packages', 'examples'].flatMap((group) =>
  readdirSync(path.join(root, group), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(root, group, d.name, 'package.json')))
    .map((d) => `${group}/${d.name}`),
);
const manifests = Object.fromEntries(dirs.map((dir) => [dir, readJson(path.join(root, dir, 'package.json'))]));

// 1. Publishable set.
for (const [dir, manifest] of Object.entries(manifests)) {
  const shouldPublish = PUBLIC.includes(manifest.name);
  check(
    shouldPublish ? manifest.private !== true : manifest.private === true,
    `${manifest.name} (${dir}) is ${shouldPublish ? 'public' : 'private'}`,
  );
}

// 2. changeset version on a scratch copy.
const scratch = mkdtempSync(path.join(tmpdir(), 'release-check-'));
try {
  for (const file of ['package.json', 'pnpm-workspace.yaml']) cpSync(path.join(root, file), path.join(scratch, file));
  cpSync(path.join(root, '.changeset'), path.join(scratch, '.changeset'), { recursive: true });
  for (const dir of dirs) {
    mkdirSync(path.join(scratch, dir), { recursive: true });
    cpSync(path.join(root, dir, 'package.json'), path.join(scratch, dir, 'package.json'));
    const changelog = path.join(root, dir, 'CHANGELOG.md');
    if (existsSync(changelog)) cpSync(changelog, path.join(scratch, dir, 'CHANGELOG.md'));
  }
  writeFileSync(
    path.join(scratch, '.changeset', 'release-check-entry.md'),
    `---\n${PUBLIC.map((name) => `'${name}': patch`).join('\n')}\n---\n\nRelease check entry.\n`,
  );
  execFileSync(path.join(root, 'node_modules', '.bin', 'changeset'), ['version'], { cwd: scratch, stdio: 'pipe' });
  for (const dir of dirs) {
    const before = manifests[dir];
    const after = readJson(path.join(scratch, dir, 'package.json'));
    if (PUBLIC.includes(before.name)) {
      check(
        after.version !== before.version,
        `changeset version bumps ${before.name} ${before.version} -> ${after.version}`,
      );
      const changelog = path.join(scratch, dir, 'CHANGELOG.md');
      const text = existsSync(changelog) ? readFileSync(changelog, 'utf8') : '';
      check(
        text.includes(`## ${after.version}`) && text.includes('Release check entry.'),
        `changeset version writes ${dir}/CHANGELOG.md with a "## ${after.version}" section`,
      );
    } else {
      check(after.version === before.version, `changeset version leaves private ${before.name} at ${before.version}`);
    }
  }
  const leftover = readdirSync(path.join(scratch, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  check(leftover.length === 0, 'changeset version consumes every pending changeset');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

// 3. Publish dry run of the real package: what goes into the tarball, then the dry run itself.
for (const name of PUBLIC) {
  const dir = Object.entries(manifests).find(([, m]) => m.name === name)?.[0];
  const packDir = mkdtempSync(path.join(tmpdir(), 'release-pack-'));
  try {
    const packed = JSON.parse(
      execFileSync('pnpm', ['pack', '--json', '--pack-destination', packDir], {
        cwd: path.join(root, dir),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const files = (packed.files ?? []).map((f) => f.path);
    check(packed.name === name, `${name}: packs ${packed.name}@${packed.version} (${files.length} files)`);
    for (const required of ['package.json', 'README.md', 'LICENSE', ...(DIST[name] ?? DUAL)]) {
      check(files.includes(required), `${name}: the tarball has ${required}`);
    }
    if (name === '@partner/trpc') checkTypesOnly(name, packed.filename, files);
    check(
      files.every((f) => !/^(src|test)\//.test(f)),
      `${name}: the tarball has no src/ or test/ files`,
    );
    const packedManifest = JSON.parse(
      execFileSync('tar', ['-xzOf', packed.filename, 'package/package.json'], { encoding: 'utf8' }),
    );
    const ranges = Object.values({ ...packedManifest.dependencies, ...packedManifest.peerDependencies });
    check(
      ranges.every((range) => !String(range).startsWith('workspace:')),
      `${name}: the packed manifest has no workspace: ranges`,
    );
  } finally {
    rmSync(packDir, { recursive: true, force: true });
  }
  let published = '';
  try {
    published = execFileSync('pnpm', ['--filter', name, 'publish', '--dry-run', '--no-git-checks'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    published = `${error.stdout ?? ''}${error.stderr ?? ''}`;
  }
  check(published.includes(`+ ${name}@`), `${name}: pnpm publish --dry-run --no-git-checks succeeds`);
}

/** @partner/trpc: no server code at run time, a self-contained declaration, no runtime dependency. */
function checkTypesOnly(name, tarball, files) {
  const read = (file) => execFileSync('tar', ['-xzOf', tarball, `package/${file}`], { encoding: 'utf8' });
  const scripts = files.filter((f) => /\.(c|m)?js$/.test(f));
  check(
    scripts.every((f) => /^dist\/index\.c?js$/.test(f)),
    `${name}: the only JavaScript files are dist/index.js and dist/index.cjs (${scripts.join(', ')})`,
  );
  for (const file of scripts) {
    const code = read(file)
      .replace(/\/\/.*$/gm, '')
      .replace(/["']use strict["'];?/, '')
      .replace(/export\s*\{\s*\};?/, '')
      .trim();
    check(code === '', `${name}: ${file} is an empty module (no server code at run time)`);
  }
  const declaration = read('dist/index.d.ts');
  const imported = [...declaration.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (m) => m[1] ?? m[2],
  );
  check(
    imported.length > 0 && imported.every((s) => s === '@trpc/server' || s.startsWith('@trpc/server/')),
    `${name}: dist/index.d.ts imports only @trpc/server (${[...new Set(imported)].join(', ')})`,
  );
  check(
    /export type AppRouter\b/.test(declaration) && !/@partner\/server/.test(declaration),
    `${name}: dist/index.d.ts exports AppRouter and names no @partner/server module`,
  );
  const manifest = JSON.parse(read('package.json'));
  check(
    Object.keys(manifest.dependencies ?? {}).length === 0 &&
      Object.keys(manifest.peerDependencies ?? {}).join() === '@trpc/server',
    `${name}: no dependencies; @trpc/server is its only peer dependency`,
  );
}

if (failures.length > 0) {
  process.stderr.write(`[release] ${failures.length} check(s) failed\n`);
  process.exit(1);
}
process.stdout.write(
  `[release] the release pipeline would publish only ${PUBLIC.slice(0, -1).join(', ')} and ${PUBLIC.at(-1)}, with their CHANGELOGs\n`,
);
