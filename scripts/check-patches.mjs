#!/usr/bin/env node
// CI guard for patchedDependencies (patches/README.md). Fails when a manifest asks for another
// version or a range of a patched package, when the installed version differs from the patch's,
// when a patch is not applied to the installed copy, or when a patched file lacks its marker.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MARKER = 'partner-tags patch';

/** `name@version` -> patch file, from pnpm-workspace.yaml's patchedDependencies. */
function patchedDependencies() {
  const text = fs.readFileSync(path.join(ROOT, 'pnpm-workspace.yaml'), 'utf8');
  const block = /^patchedDependencies:\n((?:[ \t]+.*\n?)*)/m.exec(text);
  if (!block) return [];
  return [...block[1].matchAll(/^\s+["']?(.+?)@([^@"':]+)["']?:\s*(\S+)\s*$/gm)].map((m) => ({
    name: m[1],
    version: m[2],
    patch: path.join(ROOT, m[3]),
  }));
}

function workspaceManifests() {
  const dirs = ['.', 'bench'];
  for (const group of ['packages', 'examples']) {
    for (const entry of fs.readdirSync(path.join(ROOT, group), { withFileTypes: true })) {
      if (entry.isDirectory()) dirs.push(path.join(group, entry.name));
    }
  }
  return dirs.map((dir) => path.join(ROOT, dir, 'package.json')).filter((file) => fs.existsSync(file));
}

const failures = [];
const fail = (message) => failures.push(message);

for (const { name, version, patch } of patchedDependencies()) {
  if (!fs.existsSync(patch)) {
    fail(`${name}@${version}: patch file ${path.relative(ROOT, patch)} is missing`);
    continue;
  }
  let installedDir;
  for (const manifest of workspaceManifests()) {
    const json = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    // What this workspace installs is pinned; a peer range is what a consumer of a published
    // package installs (@partner/trpc's types need @trpc/server 11, not our patched copy).
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      const wanted = json[field]?.[name];
      if (wanted === undefined) continue;
      const where = `${path.relative(ROOT, manifest)} ${field}`;
      if (wanted !== version)
        fail(`${where}: ${name} is "${wanted}"; a patched package is pinned to exactly "${version}"`);
      const link = path.join(path.dirname(manifest), 'node_modules', name);
      if (fs.existsSync(link)) installedDir ??= fs.realpathSync(link);
    }
  }
  if (!installedDir) {
    fail(`${name}@${version}: not installed in any workspace package (run pnpm install)`);
    continue;
  }
  const installed = JSON.parse(fs.readFileSync(path.join(installedDir, 'package.json'), 'utf8')).version;
  if (installed !== version) fail(`${name}: installed ${installed}, the patch is for ${version}`);

  const files = [...fs.readFileSync(patch, 'utf8').matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]);
  if (files.length === 0) fail(`${path.relative(ROOT, patch)}: no files`);
  for (const file of files) {
    const full = path.join(installedDir, file);
    if (!fs.existsSync(full)) fail(`${name}: patched file ${file} is missing`);
    else if (!fs.readFileSync(full, 'utf8').includes(MARKER)) fail(`${name}: ${file} lacks the marker "${MARKER}"`);
  }
  try {
    // Applied exactly: the patch reverses cleanly on the installed copy.
    execFileSync('git', ['apply', '--reverse', '--check', patch], { cwd: installedDir, stdio: 'pipe' });
  } catch (error) {
    fail(
      `${name}@${version}: ${path.relative(ROOT, patch)} is not applied to ${installedDir}: ${String(error.stderr ?? error).trim()}`,
    );
  }
  if (failures.length === 0) console.log(`ok ${name}@${version} (${files.length} files)`);
}

if (failures.length > 0) {
  for (const message of failures) console.error(`patch check: ${message}`);
  process.exit(1);
}
