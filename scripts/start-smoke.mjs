#!/usr/bin/env node
// The README's first command as a newcomer runs it: `pnpm start` on a fresh embedded database
// (whatever `pnpm start` does: build, then run), wait for the start banner, run the curl the banner
// prints exactly as printed (only `-w` added to read the status) and expect 201, check that the
// /docs the banner points at answers, run `pnpm example:sdk` after the banner's `export` line (the
// quick start's second terminal), then stop it with Ctrl-C (SIGINT to its process group) within a deadline.
//   node scripts/start-smoke.mjs        (.ci/run, right after `pnpm install`, before any build)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../packages/server/src/testing/net.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BANNER_DEADLINE_MS = Number(process.env.START_SMOKE_DEADLINE_MS ?? 300_000);
const STOP_DEADLINE_MS = 30_000;
const log = (line) => process.stdout.write(`[start-smoke] ${line}\n`);

/** The curl command of the banner: the lines from `curl` to the first line not ending in `\`. */
function bannerCurl(output) {
  const lines = output.split('\n');
  const start = lines.findIndex((line) => line.trim().startsWith('curl '));
  if (start < 0) return null;
  const parts = [];
  for (let i = start; i < lines.length; i++) {
    const line = lines[i].trim();
    parts.push(line.replace(/\\$/, '').trim());
    if (!line.endsWith('\\')) return parts.join(' ');
  }
  return null;
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'start-smoke-'));
const port = await freePort();
const output = { text: '' };
log(`pnpm start (PORT=${port}, DATA_DIR=${dataDir})`);
const child = spawn('pnpm', ['start'], {
  cwd: root,
  detached: true, // its own process group: pnpm, node and anything they start stop together
  env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
child.stdout.on('data', (chunk) => {
  output.text += chunk;
  process.stdout.write(chunk);
});
child.stderr.on('data', (chunk) => process.stderr.write(chunk));
const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));

let failure = null;
try {
  const started = Date.now();
  let curl = null;
  while (!curl) {
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 250))]);
    if (done) throw new Error(`pnpm start exited before its banner (code ${done.code}, signal ${done.signal})`);
    if (Date.now() - started > BANNER_DEADLINE_MS) throw new Error(`no banner within ${BANNER_DEADLINE_MS / 1000} s`);
    if (/\/docs\b/.test(output.text)) curl = bannerCurl(output.text);
  }
  log(`banner after ${Math.round((Date.now() - started) / 1000)} s; running its curl`);
  const result = spawnSync('bash', ['-c', `${curl} -o /dev/null -w '%{http_code}'`], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (result.stdout.trim() !== '201')
    throw new Error(`the banner's curl answered ${result.stdout.trim() || result.stderr}`);
  log("the banner's curl answered 201");
  const docsUrl = /(http:\/\/\S+\/docs)\b/.exec(output.text)?.[1];
  const docs = docsUrl ? await fetch(docsUrl) : null;
  if (docs?.status !== 200) throw new Error(`the banner's /docs (${docsUrl}) answered ${docs?.status}`);
  log(`${docsUrl} answered 200`);
  // The quick start's next step, in another terminal: the banner's export line, then an example,
  // on a clone with nothing built (the example runs the SDK from source, the key is the test key).
  const exportLine = output.text.split('\n').find((line) => line.trim().startsWith('export PARTNER_API_KEY='));
  if (!exportLine) throw new Error('the banner prints no `export PARTNER_API_KEY=...` line');
  log(`${exportLine.trim().replace(/mp_test_\S+/, 'mp_test_...')} && pnpm example:sdk`);
  const example = spawnSync('bash', ['-c', `${exportLine.trim()} && pnpm --silent example:sdk`], {
    cwd: root,
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (example.status !== 0) {
    throw new Error(
      `pnpm example:sdk exited ${example.status}:\n${example.stdout.slice(-3000)}${example.stderr.slice(-3000)}`,
    );
  }
  log('pnpm example:sdk passed');
} catch (error) {
  failure = error;
} finally {
  try {
    process.kill(-child.pid, 'SIGINT'); // Ctrl-C, as a newcomer stops it
  } catch {}
  const stopped = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), STOP_DEADLINE_MS))]);
  if (!stopped) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
    failure ??= new Error(`the server did not stop within ${STOP_DEADLINE_MS / 1000} s of SIGINT`);
  } else {
    log(`stopped (${stopped.signal ?? `exit ${stopped.code}`})`);
  }
  rmSync(dataDir, { recursive: true, force: true });
}
if (failure) {
  log(`FAILED: ${failure.message}`);
  process.exit(1);
}
log('ok');
