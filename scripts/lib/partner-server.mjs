// A real Partner Tags server for the repository's smoke scripts (scripts/outside-project.mjs,
// scripts/runtime-matrix.mjs): a partner onboarded with the real CLI (`partner onboard --json`)
// into a fresh embedded database (PGlite in a temp DATA_DIR), then the server (src/main.ts through
// tsx, as scripts/examples-smoke.mjs runs it) on a free loopback port, ready when /readyz answers.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../packages/server/src/testing/net.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const serverDir = path.join(root, 'packages/server');

/** Runs a command to completion; resolves with its exit code, stdout and stderr (never rejects). */
export function run(command, args, { cwd = root, env = {}, timeoutMs = 300_000, onLine } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const lines = (chunk) => {
      if (onLine) for (const line of chunk.toString().split('\n')) if (line) onLine(line);
    };
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      lines(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      lines(chunk);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      stderr += String(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 1 : 0),
        stdout,
        stderr: timedOut ? `${stderr}\ntimed out after ${timeoutMs / 1000} s` : stderr,
        timedOut,
      });
    });
  });
}

async function waitReady(url, child, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the server did not answer ${url}/readyz within ${timeoutMs / 1000} s`);
}

/**
 * Onboards a partner and starts the server. Resolves with `{ baseUrl, apiKey, partnerDomain, stop }`;
 * `stop()` ends the server and removes the database.
 */
export async function startPartnerServer({ log = () => {}, partnerDomain = 'outside-partner.com' } = {}) {
  const work = mkdtempSync(path.join(tmpdir(), 'partner-server-'));
  const env = { DATA_DIR: path.join(work, 'data'), NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: '' };
  let server;
  const stop = async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
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
  };
  try {
    const started = Date.now();
    const onboard = await run(
      process.execPath,
      [
        path.join(serverDir, 'bin/partner.mjs'),
        'onboard',
        '--name',
        'Outside Partner',
        '--domain',
        partnerDomain,
        '--json',
      ],
      { cwd: serverDir, env },
    );
    if (onboard.code !== 0) throw new Error(`onboarding failed (exit ${onboard.code}): ${onboard.stderr.slice(-2000)}`);
    const { apiKey, partnerId } = JSON.parse(onboard.stdout);
    log(`onboarded partner ${partnerId} (${partnerDomain}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: serverDir,
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', TAG_MONITOR: 'off' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitReady(baseUrl, server);
    log(`server ready on ${baseUrl} (embedded PGlite) after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { baseUrl, apiKey, partnerDomain, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
