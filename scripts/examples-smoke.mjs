#!/usr/bin/env node
// Runs every example in examples/ against a real server, as CI's smoke test of the public API:
//   node scripts/examples-smoke.mjs [name ...]      (pnpm examples:smoke)
// 0. builds nothing: each example's `start` runs the SDK from source and builds what it serves;
// 1. onboards a partner with the real CLI (`partner onboard --json`) into a fresh embedded
//    database (PGlite in a temp DATA_DIR);
// 2. starts the real server (src/main.ts, through src/testing/server-entry.ts for a test knob) on
//    a free port, with DNS_SERVERS pointing at a free loopback UDP port where each example starts
//    its own loopback DNS server for the custom-domain verification step;
// 3. runs each example's one command (`pnpm --filter @partner/example-<name> start`) with
//    PARTNER_BASE_URL, a key, PARTNER_DOMAIN and EXAMPLE_DNS_PORT set, and fails when any of them
//    fails (an example exits non-zero on any unexpected answer). Most get the test key, as a
//    newcomer runs them after `pnpm start` (test mode: DNS simulated); rest-curl gets the
//    onboarding output (the live key: verification through the loopback DNS server) and
//    data-lifecycle both keys; the servers (dashboard, admin, demo shop) run with --check;
// 4. webhook-receiver (a long-running receiver, not a one-shot walk): starts it, and drives a new
//    custom tag pending -> verified -> active with no verify call: the CNAME is published on a
//    loopback DNS server and the server's monitor (TAG_RECHECK_SCHEDULE=1s here) verifies it, then
//    one event through the collector activates it. It passes when the receiver has printed the
//    three webhooks (unwrap-verified): `webhook.test` (asked for at registration), `tag.verified`
//    and `tag.activated` of that tag, and the tag reads back `active`.
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../packages/server/src/testing/net.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverDir = path.join(root, 'packages/server');
const ORDER = ['rest-curl', 'trpc-client', 'sdk-quickstart', 'webhook-receiver'];
/** The examples that serve pages until stopped: run with --check. */
const SERVERS = ['merchant-dashboard', 'merchant-admin', 'demo-shop'];
const available = readdirSync(path.join(root, 'examples'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

const log = (line) => process.stdout.write(`[examples] ${line}\n`);

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

/** A line-oriented child process: every stdout line is streamed (prefixed) and kept for `waitFor`. */
function spawnLines(command, args, { cwd, env, prefix }) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  const waiters = new Set();
  let buffered = '';
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      process.stdout.write(`  ${prefix} | ${line}\n`);
      lines.push(line);
      for (const waiter of waiters) waiter();
    }
  });
  child.stderr.on('data', (chunk) => {
    for (const line of chunk.toString().split('\n')) if (line) process.stderr.write(`  ${prefix} | ${line}\n`);
  });
  child.on('close', () => {
    for (const waiter of waiters) waiter();
  });
  /** Resolves with the first line (seen or to come) matching `pattern`; rejects after `timeoutMs` or on exit. */
  const waitFor = (pattern, what, timeoutMs = 30_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const line = lines.find((l) => pattern.test(l));
        if (line !== undefined) return done(() => resolve(line));
        if (child.exitCode !== null || child.signalCode !== null) {
          return done(() =>
            reject(new Error(`${prefix} exited (${child.exitCode ?? child.signalCode}) before ${what}`)),
          );
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`no ${what} within ${timeoutMs / 1000} s`))),
        timeoutMs,
      );
      const done = (settle) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('close', (code) => {
        clearTimeout(force);
        resolve(code);
      });
      child.kill('SIGTERM');
    });
  return { child, lines, waitFor, stop };
}

/** REST call with the partner key; throws on an unexpected status. */
async function api(baseUrl, apiKey, method, route, body, want) {
  const res = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== want) throw new Error(`${method} ${route}: HTTP ${res.status} (wanted ${want}): ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * examples/webhook-receiver, driven end to end (see the header): the receiver runs as printed in its
 * package's `start` (tsx, the SDK from source); the lifecycle is driven over REST; no verify call is made.
 */
async function webhookReceiverStep({ baseUrl, apiKey, dnsPort }) {
  const prefix = 'webhook-receiver';
  const call = (method, route, body, want) => api(baseUrl, apiKey, method, route, body, want);
  const receiverPort = await freePort();
  const receiverDir = path.join(root, 'examples/webhook-receiver');
  log(`--- ${prefix}: its start (RECEIVER_PORT=${receiverPort}), then a tag pending -> verified -> active`);
  // Its `start` without pnpm in between, so that SIGTERM reaches it (it removes its webhook then).
  const start = JSON.parse(readFileSync(path.join(receiverDir, 'package.json'), 'utf8')).scripts.start;
  const [bin, ...args] = start.split(' ');
  const receiver = spawnLines(path.join(receiverDir, 'node_modules/.bin', bin), args, {
    cwd: receiverDir,
    env: { PARTNER_BASE_URL: baseUrl, PARTNER_API_KEY: apiKey, RECEIVER_PORT: String(receiverPort) },
    prefix,
  });
  // The loopback DNS server the server resolves through (the rest-curl example's helper process).
  const dns = spawnLines(process.execPath, ['--import', 'tsx', 'loopback-dns.ts', '--port', String(dnsPort)], {
    cwd: path.join(root, 'examples/rest-curl'),
    env: {},
    prefix: 'loopback-dns',
  });
  try {
    await dns.waitFor(/^ready /, 'loopback DNS ready line');
    const registered = await receiver.waitFor(/^registered webhook /, 'registration', 60_000);
    const webhookId = registered.split(' ')[2];
    await receiver.waitFor(/^received webhook\.test /, 'webhook.test event');

    const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const { merchantId } = await call('POST', '/v1/partners/merchant', { name: `Webhook Store ${runId}` }, 201);
    const domain = `webhook-store-${runId}.com`;
    const tag = await call('POST', '/v1/partners/tag/generate', { merchantId, domain }, 200);
    const pending = await call('GET', `/v1/partners/tag/${tag.tagId}`, undefined, 200);
    if (pending.status !== 'inactive' || pending.isVerified) {
      throw new Error(`a new custom tag should be pending (inactive, unverified): ${JSON.stringify(pending)}`);
    }
    log(`tag ${tag.tagId} pending (status ${pending.status}); publishing its CNAME, no verify call`);
    const published = Date.now();
    dns.child.stdin.write(`cname ${tag.record.name}.${domain} ${tag.record.value}\n`);
    const escaped = tag.tagId.replace(/[-]/g, '\\-');
    await receiver.waitFor(new RegExp(`^received tag\\.verified .*tag=${escaped} `), `tag.verified for ${tag.tagId}`);
    log(`tag.verified received ${((Date.now() - published) / 1000).toFixed(1)} s after publishing the record`);
    const verified = await call('GET', `/v1/partners/tag/${tag.tagId}`, undefined, 200);
    if (verified.status !== 'waiting_for_events' || !verified.isVerified || !verified.isConnected) {
      throw new Error(
        `after tag.verified the tag should be waiting_for_events, verified, connected: ${JSON.stringify(verified)}`,
      );
    }

    const collect = await fetch(`${baseUrl}/v1/collect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        tagId: tag.tagId,
        events: [
          { id: `${runId}-1`, event_name: 'PageView', event_time: new Date().toISOString(), data: { path: '/' } },
        ],
      }),
    });
    if (collect.status !== 202) throw new Error(`POST /v1/collect: HTTP ${collect.status}: ${await collect.text()}`);
    await receiver.waitFor(new RegExp(`^received tag\\.activated .*tag=${escaped} `), `tag.activated for ${tag.tagId}`);
    const active = await call('GET', `/v1/partners/tag/${tag.tagId}`, undefined, 200);
    if (active.status !== 'active' || !active.firstEventAt) {
      throw new Error(`after tag.activated the tag should be active with firstEventAt: ${JSON.stringify(active)}`);
    }
    const received = receiver.lines.filter((l) => l.startsWith('received ')).map((l) => l.split(' ')[1]);
    log(`the receiver verified and printed ${received.length} webhooks: ${received.join(', ')}`);

    const code = await receiver.stop();
    if (code !== 0) throw new Error(`the receiver exited with ${code} on SIGTERM`);
    const { webhooks } = await call('GET', '/v1/partners/webhooks?limit=100', undefined, 200);
    if (webhooks.some((w) => w.webhookId === webhookId))
      throw new Error('the receiver did not remove its webhook on exit');
    return true;
  } catch (error) {
    log(`${prefix}: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  } finally {
    await receiver.stop();
    dns.child.stdin.end();
    await dns.stop();
  }
}

/**
 * Runs the examples named in `requested` (all when empty) against a fresh server; resolves with one
 * result per example. `front(baseUrl)`, when given, starts something in front of the server (a
 * validating proxy: scripts/prism-check.mjs) and resolves with `{ url, stop }`: the examples then
 * call `url` instead of the server, but for those named in `direct`.
 */
export async function runExamples({ requested = [], front, direct = [] } = {}) {
  const unknown = requested.filter((name) => !available.includes(name));
  if (unknown.length > 0) throw new Error(`unknown example(s) ${unknown.join(', ')}; known: ${available.join(', ')}`);
  const examples = (requested.length > 0 ? [...requested] : [...available]).sort(
    (a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99),
  );
  const started = Date.now();
  const work = mkdtempSync(path.join(tmpdir(), 'partner-examples-'));
  const dataDir = path.join(work, 'data');
  const partnerDomain = 'examples-partner.com';
  let server;
  let proxy;
  const results = [];
  try {
    const [httpPort, dnsPort] = await Promise.all([freePort(), freeUdpPort()]);
    const serverUrl = `http://127.0.0.1:${httpPort}`;
    const serverEnv = {
      DATA_DIR: dataDir,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.EXAMPLES_LOG_LEVEL ?? 'warn',
      DATABASE_URL: '',
    };

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

    log(`starting the server on ${serverUrl} (embedded PGlite, DNS_SERVERS=127.0.0.1:${dnsPort})`);
    // The test entry (src/main.ts with test knobs): the webhook worker looks for due deliveries
    // every 200 ms instead of every second (a test knob, not a setting: docs/decisions/settings.md).
    const knobs = JSON.stringify({ webhookPollMs: 200 });
    server = spawn(process.execPath, ['--import', 'tsx', 'src/testing/server-entry.ts', knobs], {
      cwd: serverDir,
      env: {
        ...process.env,
        ...serverEnv,
        PORT: String(httpPort),
        HOST: '127.0.0.1',
        DNS_SERVERS: `127.0.0.1:${dnsPort}`,
        DNS_TIMEOUT_MS: '2000',
        // The webhook receiver registers a loopback http URL; the monitor re-checks pending tags every
        // second (the other examples verify by call, before or after the monitor: same effect).
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        TAG_RECHECK_SCHEDULE: '1s',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.once(signal, () => {
        server?.kill('SIGKILL');
        void proxy?.stop();
        rmSync(work, { recursive: true, force: true });
        process.exit(1);
      });
    }
    await waitReady(serverUrl, server);
    log(`server ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    proxy = front ? await front(serverUrl) : undefined;
    // What the examples call: the server, or what stands in front of it.
    const baseUrl = proxy?.url ?? serverUrl;

    for (const name of examples) {
      const t0 = Date.now();
      const apiUrl = direct.includes(name) ? serverUrl : baseUrl;
      if (name === 'webhook-receiver') {
        const ok = await webhookReceiverStep({ baseUrl: apiUrl, apiKey: onboarding.apiKey, dnsPort });
        const seconds = ((Date.now() - t0) / 1000).toFixed(1);
        results.push({ name, ok, seconds });
        log(`${ok ? 'PASS' : 'FAIL'} ${name} in ${seconds} s`);
        continue;
      }
      log(`--- ${name}: pnpm --filter @partner/example-${name} start`);
      // The servers run until stopped; --check makes each check its pages and exit.
      const args = SERVERS.includes(name) ? ['--check'] : [];
      const { code } = await run('pnpm', ['--silent', '--filter', `@partner/example-${name}`, 'start', ...args], {
        env: {
          PARTNER_BASE_URL: apiUrl,
          // The demo shop's stand-in collector host talks to the server itself (collector hosts are
          // routed by Host, which a proxy in front does not keep).
          SHOP_COLLECTOR_URL: serverUrl,
          ...(name === 'rest-curl'
            ? { PARTNER_ONBOARDING_FILE: onboardingFile, PARTNER_API_KEY: '', PARTNER_TEST_API_KEY: '' }
            : name === 'data-lifecycle'
              ? { PARTNER_API_KEY: onboarding.apiKey, PARTNER_TEST_API_KEY: onboarding.testApiKey }
              : { PARTNER_API_KEY: onboarding.testApiKey, PARTNER_TEST_API_KEY: '' }),
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
    await proxy?.stop();
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
  return results;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const results = await runExamples({ requested: process.argv.slice(2) }).catch((error) => {
    console.error(`examples-smoke: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  });
  process.exit(results.length > 0 && results.every((r) => r.ok) ? 0 : 1);
}
