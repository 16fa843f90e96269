#!/usr/bin/env node
// The SDK's runtime matrix (CI step "SDK runtime matrix"):
//   node scripts/runtime-matrix.mjs
// One short program (create a merchant, generate a live tag, send 3 events, list merchants with
// `.withResponse()`, iterate the events over pages of 2) against a real server (embedded PGlite, a
// partner onboarded with the CLI), with the SDK installed from its `pnpm pack` tarball, under:
//   Node 20 ESM and CJS (this Node), Node 22 (npm `node`), Bun (npm `bun`), Deno (npm `deno`) and
//   workerd (npm `workerd`: the program bundled by esbuild into a worker, called over HTTP, its
//   fetches reaching the local server through a network service allowing loopback), and Chromium
//   (Debian's /usr/bin/chromium through playwright-core: the ESM build in a page on another origin,
//   with a merchant session; scripts/lib/chromium-row.mjs).
// `--only <row>[,<row>]` runs some rows (names in lower case, e.g. `--only chromium,"node 20 esm"`).
// Every runtime and tool is installed from npm into a temp dir, versions pinned. Prints a table.
// A runtime that cannot be installed or started here is "skipped: <reason>" (the exact error);
// a runtime that starts and whose program fails is FAIL, and the script exits non-zero.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../packages/server/src/testing/net.mjs';
import { CHROMIUM, runChromiumRow } from './lib/chromium-row.mjs';
import { run, startPartnerServer } from './lib/partner-server.mjs';
import { npmInstall, packTarballs } from './outside-project.mjs';

/** Pinned npm packages: the runtimes (MATRIX_<NAME>_VERSION overrides one), and esbuild to bundle the worker. */
const RUNTIME_PACKAGES = Object.fromEntries(
  Object.entries({ node: '22.23.3', bun: '1.4.5', deno: '2.9.6', workerd: '1.20261117.1' }).map(([name, version]) => [
    name,
    process.env[`MATRIX_${name.toUpperCase()}_VERSION`] || version,
  ]),
);
const ESBUILD = '0.27.7';
const onlyArg = process.argv.indexOf('--only');
/** The rows asked for (`--only`), lower case; null: all. */
const ONLY = onlyArg === -1 ? null : (process.argv[onlyArg + 1] ?? '').toLowerCase().split(',').filter(Boolean);
const RUN_TIMEOUT_MS = 90_000;

const log = (line) => process.stdout.write(`[runtimes] ${line}\n`);
const firstLines = (text, n = 3) =>
  String(text)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, n)
    .join(' / ')
    .slice(0, 400);

/** The program, shared by every entry: plain JavaScript, no Node API. */
const SMOKE = `
async function smoke(PartnerClient, { apiKey, baseURL, partnerDomain, runtime }) {
  const client = new PartnerClient({ apiKey, baseURL });
  const runId = (runtime + '-' + Date.now().toString(36) + Math.random().toString(36).slice(2, 6)).toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const { merchantId } = await client.merchants.create({ name: 'Matrix ' + runId });
  const tag = await client.tags.generate({ merchantId, domain: runId + '.' + partnerDomain });
  if (tag.status !== 'active') throw new Error('tags.generate: expected an active preverified tag, got ' + tag.status);
  const sent = await client.events.send({
    tagId: tag.tagId,
    events: [{ event_name: 'PageView' }, { event_name: 'AddToCart' }, { event_name: 'Purchase' }],
  });
  if (sent.accepted !== 3) throw new Error('events.send: accepted ' + sent.accepted);
  const { data: page, response, requestId } = await client.merchants.list({ limit: 100 }).withResponse();
  if (response.status !== 200) throw new Error('merchants.list().withResponse(): HTTP ' + response.status);
  if (!page.data.some((m) => m.merchantId === merchantId)) throw new Error('merchants.list: the new merchant is missing');
  if (!requestId) throw new Error('merchants.list().withResponse(): no requestId');
  const names = [];
  for await (const event of client.events.list({ merchantId, limit: 2, sortOrder: 'asc' })) names.push(event.event_name);
  if (names.length !== 3) throw new Error('events.list: iterated ' + names.length + ' events, expected 3');
  return { merchants: page.data.length, requestId, events: names.length };
}
async function main(PartnerClient, config) {
  try {
    return { ok: true, ...(await smoke(PartnerClient, config)) };
  } catch (error) {
    return { ok: false, error: (error && error.name ? error.name + ': ' : '') + (error && error.message ? error.message : String(error)) };
  }
}
`;

const ENTRY_ESM = `import { PartnerClient } from '@partner/sdk';
${SMOKE}
const env = globalThis.Deno ? globalThis.Deno.env.toObject() : globalThis.process.env;
const result = await main(PartnerClient, { apiKey: env.PARTNER_API_KEY, baseURL: env.PARTNER_BASE_URL, partnerDomain: env.PARTNER_DOMAIN, runtime: env.MATRIX_RUNTIME });
console.log('RESULT ' + JSON.stringify(result));
`;

const ENTRY_CJS = `'use strict';
const { PartnerClient } = require('@partner/sdk');
${SMOKE}
const env = process.env;
main(PartnerClient, { apiKey: env.PARTNER_API_KEY, baseURL: env.PARTNER_BASE_URL, partnerDomain: env.PARTNER_DOMAIN, runtime: env.MATRIX_RUNTIME })
  .then((result) => console.log('RESULT ' + JSON.stringify(result)));
`;

const ENTRY_WORKER = `import { PartnerClient } from '@partner/sdk';
${SMOKE}
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname !== '/run') return new Response('ready');
    const result = await main(PartnerClient, { apiKey: env.PARTNER_API_KEY, baseURL: env.PARTNER_BASE_URL, partnerDomain: env.PARTNER_DOMAIN, runtime: 'workerd' });
    return Response.json(result);
  },
};
`;

const capnpString = (value) => JSON.stringify(String(value));
const workerdConfig = ({ port, env }) => `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .smokeWorker),
    # Outbound fetches may reach loopback (the local API server); the default allows public addresses only.
    (name = "outbound", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = ${capnpString(`127.0.0.1:${port}`)}, http = (), service = "main") ],
);

const smokeWorker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.bundle.js") ],
  compatibilityDate = "2025-09-01",
  globalOutbound = "outbound",
  bindings = [
${Object.entries(env)
  .map(([name, value]) => `    (name = ${capnpString(name)}, text = ${capnpString(value)}),`)
  .join('\n')}
  ],
);
`;

/** Parses the `RESULT {...}` line of a program's output. */
function resultOf(output) {
  const line = output.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) {
    return {
      ok: false,
      error: `no result (exit ${output.code}): ${firstLines(output.stderr || output.stdout, 4) || 'no output'}`,
    };
  }
  return JSON.parse(line.slice('RESULT '.length));
}

async function main() {
  const started = Date.now();
  const work = mkdtempSync(path.join(tmpdir(), 'partner-runtimes-'));
  const app = path.join(work, 'app');
  mkdirSync(app, { recursive: true });
  const rows = [];
  let server;
  try {
    const tarballs = await packTarballs(path.join(work, 'tarballs'), { log, names: ['@partner/sdk'] });
    writeFileSync(
      path.join(app, 'package.json'),
      `${JSON.stringify(
        {
          name: 'partner-runtime-matrix',
          private: true,
          dependencies: { '@partner/sdk': `file:${tarballs['@partner/sdk']}` },
          devDependencies: { esbuild: ESBUILD },
        },
        null,
        2,
      )}\n`,
    );
    writeFileSync(path.join(app, 'smoke.mjs'), ENTRY_ESM);
    writeFileSync(path.join(app, 'smoke.cjs'), ENTRY_CJS);
    writeFileSync(path.join(app, 'worker.mjs'), ENTRY_WORKER);

    // Installs in parallel (network-bound): the app (SDK tarball + esbuild) and each runtime in its own dir.
    // With `--only`, just the runtimes its rows need.
    const runtimes = Object.entries(RUNTIME_PACKAGES).filter(
      ([name]) => !ONLY || ONLY.some((r) => r.startsWith(name === 'node' ? 'node 22' : name)),
    );
    log(
      `npm install: the SDK tarball + esbuild@${ESBUILD}; ${runtimes.map(([name, version]) => `${name}@${version}`).join(', ')}`,
    );
    const installs = await Promise.all([
      npmInstall(app, 'app').then(
        (seconds) => ({ ok: true, seconds }),
        (error) => ({ ok: false, error }),
      ),
      ...runtimes.map(async ([name, version]) => {
        const dir = path.join(work, 'runtimes', name);
        mkdirSync(dir, { recursive: true });
        writeFileSync(
          path.join(dir, 'package.json'),
          `${JSON.stringify({ name: `runtime-${name}`, private: true, dependencies: { [name]: version } }, null, 2)}\n`,
        );
        try {
          const seconds = await npmInstall(dir, `${name}@${version}`);
          return { name, ok: true, seconds, bin: path.join(dir, 'node_modules/.bin', name) };
        } catch (error) {
          return { name, ok: false, error: error instanceof Error ? error.message : String(error) };
        }
      }),
    ]);
    const [appInstall, ...runtimeInstalls] = installs;
    if (!appInstall.ok) throw appInstall.error;
    const installed = Object.fromEntries(runtimeInstalls.map((r) => [r.name, r]));
    log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    server = await startPartnerServer({ log, partnerDomain: 'matrix-partner.com' });
    const env = {
      PARTNER_API_KEY: server.apiKey,
      PARTNER_BASE_URL: server.baseUrl,
      PARTNER_DOMAIN: server.partnerDomain,
    };

    /** Version of a runtime binary, or the reason it cannot start here. */
    const versionOf = async (bin, args = ['--version']) => {
      const out = await run(bin, args, { cwd: app, timeoutMs: 30_000 });
      return out.code === 0
        ? { ok: true, version: firstLines(out.stdout, 1) }
        : {
            ok: false,
            reason: `\`${path.basename(bin)} ${args.join(' ')}\` exit ${out.code}: ${firstLines(out.stderr || out.stdout)}`,
          };
    };
    /** Runs one row: the runtime's version, then the program; records PASS, FAIL or skipped. */
    const row = async (runtime, { install, bin, versionArgs, exec }) => {
      if (ONLY && !ONLY.includes(runtime.toLowerCase())) return;
      const t0 = Date.now();
      const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);
      if (install && !install.ok) {
        rows.push({
          runtime,
          version: '-',
          result: 'skipped',
          seconds: seconds(),
          detail: `npm install failed: ${firstLines(install.error, 3)}`,
        });
        return;
      }
      const version = await versionOf(bin, versionArgs);
      if (!version.ok) {
        rows.push({ runtime, version: '-', result: 'skipped', seconds: seconds(), detail: version.reason });
        return;
      }
      const result = await exec();
      rows.push({
        runtime,
        version: version.version,
        result: result.ok ? 'PASS' : result.skipped ? 'skipped' : 'FAIL',
        seconds: seconds(),
        detail: result.ok
          ? (result.detail ??
            `${result.merchants} merchants listed (requestId ${result.requestId}), ${result.events} events iterated`)
          : result.error,
      });
      log(`${runtime}: ${rows.at(-1).result} ${rows.at(-1).detail}`);
    };
    const runEntry = async (command, args, runtime, extraEnv = {}) =>
      resultOf(
        await run(command, args, {
          cwd: app,
          env: { ...env, MATRIX_RUNTIME: runtime, ...extraEnv },
          timeoutMs: RUN_TIMEOUT_MS,
        }),
      );

    await row('Node 20 ESM', {
      bin: process.execPath,
      exec: () => runEntry(process.execPath, ['smoke.mjs'], 'node20-esm'),
    });
    await row('Node 20 CJS', {
      bin: process.execPath,
      exec: () => runEntry(process.execPath, ['smoke.cjs'], 'node20-cjs'),
    });
    await row('Node 22 ESM', {
      install: installed.node,
      bin: installed.node?.bin,
      exec: () => runEntry(installed.node?.bin, ['smoke.mjs'], 'node22-esm'),
    });
    await row('Bun', {
      install: installed.bun,
      bin: installed.bun?.bin,
      exec: () => runEntry(installed.bun?.bin, ['smoke.mjs'], 'bun'),
    });
    await row('Deno', {
      install: installed.deno,
      bin: installed.deno?.bin,
      exec: () =>
        runEntry(
          installed.deno?.bin,
          [
            'run',
            '--node-modules-dir=manual',
            `--allow-net=${new URL(server.baseUrl).host}`,
            '--allow-env',
            '--allow-read',
            'smoke.mjs',
          ],
          'deno',
          { DENO_DIR: path.join(work, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
        ),
    });
    await row('workerd', {
      install: installed.workerd,
      bin: installed.workerd?.bin,
      exec: async () => {
        const bundle = await run(
          path.join(app, 'node_modules/.bin/esbuild'),
          [
            'worker.mjs',
            '--bundle',
            '--format=esm',
            '--platform=neutral',
            '--main-fields=module,main',
            '--conditions=workerd,worker,browser',
            '--outfile=worker.bundle.js',
            '--log-level=warning',
          ],
          { cwd: app },
        );
        if (bundle.code !== 0) return { ok: false, error: `esbuild: ${firstLines(bundle.stderr)}` };
        const port = await freePort();
        writeFileSync(path.join(app, 'workerd.capnp'), workerdConfig({ port, env }));
        const { spawn } = await import('node:child_process');
        const child = spawn(installed.workerd?.bin, ['serve', 'workerd.capnp'], {
          cwd: app,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (c) => (output += c));
        child.stderr.on('data', (c) => (output += c));
        try {
          const deadline = Date.now() + 30_000;
          for (;;) {
            if (child.exitCode !== null)
              return { ok: false, skipped: true, error: `workerd exited ${child.exitCode}: ${firstLines(output)}` };
            try {
              if ((await fetch(`http://127.0.0.1:${port}/`)).ok) break;
            } catch {
              // not listening yet
            }
            if (Date.now() > deadline)
              return { ok: false, skipped: true, error: `workerd did not listen within 30 s: ${firstLines(output)}` };
            await new Promise((r) => setTimeout(r, 200));
          }
          const res = await fetch(`http://127.0.0.1:${port}/run`, { signal: AbortSignal.timeout(RUN_TIMEOUT_MS) });
          const text = await res.text();
          try {
            return JSON.parse(text);
          } catch {
            return { ok: false, error: `HTTP ${res.status}: ${firstLines(text)} ${firstLines(output)}` };
          }
        } finally {
          child.kill('SIGTERM');
        }
      },
    });
    await row('Chromium', {
      bin: CHROMIUM,
      exec: () =>
        runChromiumRow({ app, server }).catch((error) => ({
          ok: false,
          error: error instanceof Error ? error.message : String(error),
        })),
    });
  } finally {
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  }

  const headers = ['runtime', 'version', 'result', 'time', 'detail'];
  const table = rows.map((r) => [r.runtime, r.version, r.result, `${r.seconds} s`, r.detail]);
  const widths = headers.map((h, i) => Math.max(h.length, ...table.map((cells) => cells[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  process.stdout.write(
    `\n${line(headers)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${table.map(line).join('\n')}\n\n`,
  );
  const failed = rows.filter((r) => r.result === 'FAIL');
  const skipped = rows.filter((r) => r.result === 'skipped');
  log(
    `${rows.length - failed.length - skipped.length} passed, ${skipped.length} skipped, ${failed.length} failed in ${((Date.now() - started) / 1000).toFixed(1)} s` +
      (skipped.length ? `; skipped: ${skipped.map((r) => `${r.runtime} (${r.detail})`).join('; ')}` : ''),
  );
  process.exit(failed.length === 0 && rows.length > 0 ? 0 : 1);
}

main().catch((error) => {
  log(`FAIL: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
