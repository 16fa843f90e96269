#!/usr/bin/env node
// Runs every example in examples/ against a real server, as CI's smoke test of the public API:
//   node scripts/examples-smoke.mjs [name ...]      (pnpm examples:smoke)
// 0. builds what the examples run (the SDK, which the SDK example imports as a package);
// 1. onboards a partner with the real CLI (`partner onboard --json`) into a fresh embedded
//    database (PGlite in a temp DATA_DIR);
// 2. starts the real server (src/main.ts) on a free port, with DNS_SERVERS pointing at a free
//    loopback UDP port where each example starts its own loopback DNS server for the
//    custom-domain verification step;
// 3. runs each example's one command (`pnpm --filter @partner/example-<name> start`) with
//    PARTNER_BASE_URL, the onboarding output, PARTNER_DOMAIN and EXAMPLE_DNS_PORT set, and fails
//    when any of them fails (an example exits non-zero on any unexpected answer).
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverDir = path.join(root, 'packages/server');
const ORDER = ['rest-curl', 'trpc-client', 'sdk-quickstart'];
const available = readdirSync(path.join(root, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`examples-smoke: unknown example(s) ${unknown.join(', ')}; known: ${available.join(', ')}`);
  process.exit(2);
}
const examples = (requested.length > 0 ? requested : available).sort(
  (a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99),
);

const log = (line) => process.stdout.write(`[examples] ${line}\n`);

function freeTcpPort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function freeUdpPort() {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

/** Runs a command to completion; output is prefixed and streamed; resolves with its exit code and stdout. */
function run(command, args, { cwd = root, env = {}, prefix, timeoutMs = 180_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const stream = (target) => (chunk) => {
      if (!prefix) return;
      for (const line of chunk.toString().split('\n')) if (line) target.write(`  ${prefix} | ${line}\n`);
    };
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      stream(process.stdout)(chunk);
    });
    child.stderr.on('data', stream(process.stderr));
    const timer = setTimeout(() => {
      log(`${prefix ?? command}: timed out after ${timeoutMs / 1000} s`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 1 : 0), stdout });
    });
  });
}

async function waitReady(url, child, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the server did not answer ${url}/readyz within ${timeoutMs / 1000} s`);
}

const started = Date.now();
const work = mkdtempSync(path.join(tmpdir(), 'partner-examples-'));
const dataDir = path.join(work, 'data');
const partnerDomain = 'examples-partner.com';
let server;
const results = [];
try {
  const [httpPort, dnsPort] = await Promise.all([freeTcpPort(), freeUdpPort()]);
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  const serverEnv = {
    DATA_DIR: dataDir,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.EXAMPLES_LOG_LEVEL ?? 'warn',
    DATABASE_URL: '',
  };

  // Build what the examples run: the SDK example imports @partner/sdk, i.e. its dist/ (as an
  // installed package would), which a fresh clone does not have.
  if (examples.includes('sdk-quickstart')) {
    log('building @partner/sdk (the SDK example imports its build)');
    const build = await run('pnpm', ['--silent', '--filter', '@partner/sdk', 'build'], { prefix: 'sdk build' });
    if (build.code !== 0) throw new Error(`the SDK build failed (exit ${build.code})`);
  }

  log(`onboarding a partner (${partnerDomain}) with \`partner onboard --json\` into ${dataDir}`);
  const onboard = await run(
    process.execPath,
    [
      path.join(serverDir, 'bin/partner.mjs'),
      'onboard',
      '--name',
      'Examples Partner',
      '--domain',
      partnerDomain,
      '--json',
    ],
    { cwd: serverDir, env: serverEnv },
  );
  if (onboard.code !== 0) throw new Error(`onboarding failed (exit ${onboard.code})`);
  const onboarding = JSON.parse(onboard.stdout);
  log(`onboarded partner ${onboarding.partnerId} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const onboardingFile = path.join(work, 'onboarding.json');
  writeFileSync(onboardingFile, JSON.stringify(onboarding));

  log(`starting the server on ${baseUrl} (embedded PGlite, DNS_SERVERS=127.0.0.1:${dnsPort})`);
  server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serverDir,
    env: {
      ...process.env,
      ...serverEnv,
      PORT: String(httpPort),
      HOST: '127.0.0.1',
      DNS_SERVERS: `127.0.0.1:${dnsPort}`,
      DNS_TIMEOUT_MS: '2000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      server?.kill('SIGKILL');
      rmSync(work, { recursive: true, force: true });
      process.exit(1);
    });
  }
  await waitReady(baseUrl, server);
  log(`server ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);

  for (const name of examples) {
    const t0 = Date.now();
    log(`--- ${name}: pnpm --filter @partner/example-${name} start`);
    const { code } = await run('pnpm', ['--silent', '--filter', `@partner/example-${name}`, 'start'], {
      env: {
        PARTNER_BASE_URL: baseUrl,
        // The SDK example reads the onboarding output; the others take the key from env.
        ...(name === 'sdk-quickstart'
          ? { PARTNER_ONBOARDING_FILE: onboardingFile, PARTNER_API_KEY: '' }
          : { PARTNER_API_KEY: onboarding.apiKey }),
        PARTNER_DOMAIN: partnerDomain,
        EXAMPLE_DNS_PORT: String(dnsPort),
        CUSTOM_DOMAIN: '',
      },
      prefix: name,
    });
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    results.push({ name, ok: code === 0, seconds });
    log(`${code === 0 ? 'PASS' : `FAIL (exit ${code})`} ${name} in ${seconds} s`);
  }
} catch (error) {
  log(`error: ${error instanceof Error ? error.message : String(error)}`);
  results.push({ name: 'setup', ok: false, seconds: '0' });
} finally {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => {
      const force = setTimeout(() => server.kill('SIGKILL'), 10_000);
      server.once('close', () => {
        clearTimeout(force);
        resolve();
      });
    });
  }
  rmSync(work, { recursive: true, force: true });
}

const failed = results.filter((r) => !r.ok);
log(
  `${results.length - failed.length}/${results.length} passed in ${((Date.now() - started) / 1000).toFixed(1)} s` +
    (failed.length ? `; failed: ${failed.map((r) => r.name).join(', ')}` : ''),
);
process.exit(failed.length === 0 && results.length > 0 ? 0 : 1);
