#!/usr/bin/env node
// The OpenAPI document against what the server does, on real traffic: Stoplight Prism's validating
// proxy in front of a fresh server, every example (scripts/examples-smoke.mjs) run through it.
//   node scripts/prism-check.mjs [example ...]      (pnpm check:prism)
// 1. writes the document the server serves (openapi:dump) to a temp file;
// 2. starts the examples' server, then `prism proxy <document> <server>` on a free port, and runs
//    the examples against the proxy (trpc-client and demo-shop excepted: tRPC and the collector
//    hosts are not in the document);
// 3. counts every violation Prism reports, request or response, and prints each with the request
//    it was found on. Exit 0 only when every example passed and Prism reported no violation.
// PRISM_DOCUMENT=<file> checks against that document instead; PRISM_LOG=1 prints Prism's whole log.
// Prism comes through npx, pinned: 5.14.2 is the last release that runs on Node 20 (5.15+ need 24).
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { freePort } from '../packages/server/src/testing/net.mjs';
import { runExamples } from './examples-smoke.mjs';
import { root, run } from './lib/partner-server.mjs';

const PRISM = '@stoplight/prism-cli@5.14.2';
const log = (line) => process.stdout.write(`[prism] ${line}\n`);

const work = mkdtempSync(path.join(tmpdir(), 'prism-check-'));
const documentFile = path.join(work, 'openapi.json');
/** What Prism found: differences between the document and the server, and invalid requests refused as documented. */
const differences = [];
const refused = [];
/** The request Prism is handling (its log names it, then its upstream status, then any violation). */
let current = { request: '', status: 0 };

/** Prism in front of `upstream`: resolves with `{ url, stop }` once it listens. */
async function startPrism(upstream) {
  const port = await freePort();
  const args = [
    '--yes',
    PRISM,
    'proxy',
    documentFile,
    upstream,
    ...(process.env.PRISM_ERRORS === '1' ? ['--errors'] : []),
    '--port',
    String(port),
  ];
  // Prism's own CORS answers would hide the server's (the merchant admin checks them).
  args.push('--host', '127.0.0.1', '--cors=false');
  log(`npx ${args.slice(1).join(' ')}`);
  // Its own process group: npx starts prism as a child, and stopping must end both.
  const child = spawn('npx', args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let ready;
  const listening = new Promise((resolve, reject) => {
    ready = resolve;
    child.once('exit', (code) => reject(new Error(`prism exited (${code}) before listening`)));
  });
  let buffered = '';
  const onData = (chunk) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      // Prism colours its log even into a pipe.
      const line = stripVTControlCharacters(buffered.slice(0, newline)).trim();
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
      if (/Prism is listening/.test(line)) ready();
      const received = /\[HTTP SERVER\] (\w+) (\S+) .*Request received/.exec(line);
      if (received) current = { request: `${received[1].toUpperCase()} ${received[2]}`, status: 0 };
      const returned = /The upstream call to \S+ has returned (\d{3})/.exec(line);
      if (returned) current.status = Number(returned[1]);
      const violation = /Violation: ((request|response)\b.*)$/.exec(line);
      if (violation) {
        // A request the document calls invalid that the server refused (4xx) is the two agreeing
        // (the examples send some on purpose, to show the errors); accepted, it is a difference.
        const agreed = violation[2] === 'request' && current.status >= 400 && current.status < 500;
        (agreed ? refused : differences).push({ ...current, violation: violation[1] });
        process.stdout.write(`  prism | ${agreed ? 'refused as documented' : 'DIFFERENCE'}: ${line}\n`);
      } else if (/✖\s+error/.test(line)) {
        differences.push({ ...current, violation: line.replace(/^.*error\s+/, '') });
        process.stdout.write(`  prism | DIFFERENCE: ${line}\n`);
      } else if (process.env.PRISM_LOG === '1') {
        process.stdout.write(`  prism | ${line}\n`);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  await Promise.race([
    listening,
    new Promise((_, reject) => setTimeout(() => reject(new Error('prism did not listen within 120 s')), 120_000)),
  ]);
  const url = `http://127.0.0.1:${port}`;
  log(`listening on ${url}, forwarding to ${upstream}`);
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        resolve();
      }
    });
  return { url, stop };
}

let code = 1;
try {
  if (process.env.PRISM_DOCUMENT) {
    // Another document to hold the server to (e.g. an older one, to compare).
    copyFileSync(path.resolve(process.env.PRISM_DOCUMENT), documentFile);
  } else {
    const dump = await run('pnpm', ['--silent', '--filter', '@partner/server', 'openapi:dump', documentFile], {
      cwd: root,
    });
    if (dump.code !== 0) throw new Error(`openapi:dump failed: ${dump.stderr.slice(-2000)}`);
  }
  // tRPC is its own protocol on /trpc, not part of the document; the demo shop's page talks to a
  // collector host (`POST /e` by Host), which a proxy on another port cannot stand in for: both
  // examples talk to the server.
  const results = await runExamples({
    requested: process.argv.slice(2),
    front: startPrism,
    direct: ['trpc-client', 'demo-shop'],
  });
  const failed = results.filter((r) => !r.ok);
  // The same violation found on many requests is one difference of the document: listed once.
  const distinct = new Map();
  for (const d of differences) {
    const key = `${d.request.replace(/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/gi, '{id}')} -> ${d.status}: ${d.violation}`;
    distinct.set(key, (distinct.get(key) ?? 0) + 1);
  }
  for (const [key, count] of distinct) log(`difference (${count}x): ${key}`);
  for (const r of refused) log(`invalid request refused as documented: ${r.request} -> ${r.status}: ${r.violation}`);
  log(
    `${differences.length} difference(s) (${distinct.size} distinct), ${refused.length} invalid request(s) refused ` +
      `as documented, over ${results.length} example run(s); ${failed.length} example(s) failed` +
      (failed.length ? `: ${failed.map((r) => r.name).join(', ')}` : ''),
  );
  code = differences.length === 0 && failed.length === 0 && results.length > 0 ? 0 : 1;
} catch (error) {
  log(`error: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(code);
