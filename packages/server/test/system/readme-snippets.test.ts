// The README's shell snippets run as printed (issue 12 item 5): every ```bash / ```sh block of the
// READMEs and docs pages below is either run here with bash against a freshly started server (a real
// `src/main.ts` process on a fresh embedded PGlite store, real HTTP) or listed in SKIPPED with the
// reason it does not run here. A block that is neither fails the test, so is a SKIPPED entry that
// matches no block (the list cannot go stale).
//
// What is substituted, and only that (what the README tells the reader to substitute):
// - `mp_live_...`: the demo partner's API key, read from the start banner ("the key printed at
//   first start");
// - `http://localhost:3000`: the URL the server printed (a free port: 3000 may be taken here).
// How the blocks are run: `bash -eo pipefail` (a failing command or pipe fails the block), with a
// `curl` first on PATH that runs the real curl unchanged and only records each call's arguments,
// response headers and exit code; every call must answer 2xx (except what EXPECTED_FAILURES
// allows, as the README says) and exit 0. A stream never ends by itself: for `-N` calls the wrapper
// adds `--max-time` and counts the timeout (curl exit 28) as the reader's Ctrl-C after a 200.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, spawnServer, startTestDnsServer, type TestDnsServer } from '../../src/testing/index.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const READMES = ['README.md', 'docs/api.md', 'docs/operations.md', 'packages/sdk/README.md', 'examples/README.md'];
const STREAM_SECONDS = 3;

/** Blocks not run here, by file and first line, with the reason. */
const SKIPPED: { file: string; firstLine: string; reason: string }[] = [
  {
    file: 'README.md',
    firstLine: 'pnpm install && pnpm start',
    reason: 'the Quick start commands themselves: .ci/run runs both on a fresh clone (scripts/start-smoke.mjs)',
  },
  {
    file: 'docs/operations.md',
    firstLine: 'pnpm partner onboard --name "Acme Platform" --domain acme-platform.com [--json]',
    reason: 'a usage synopsis ([--json], <partnerId>); the CLI runs offline, examples:smoke onboards with it',
  },
  {
    file: 'docs/operations.md',
    firstLine: 'DATABASE_URL=postgres://user@host:5432/partner_tags pnpm start',
    reason: 'starts a server / the whole suite on PostgreSQL (.ci/run runs the suite on PostgreSQL)',
  },
  {
    file: 'docs/operations.md',
    firstLine: 'nats-server -js -sd /tmp/nats &',
    reason: 'starts NATS and a server in log mode (test/event-log*.test.ts, test/system/event-log-*.test.ts)',
  },
  {
    file: 'docs/operations.md',
    firstLine: 'pnpm fuzz',
    reason: 'minutes-long measurements; test/system/fuzz.test.ts and loadtest-smoke.test.ts run short ones',
  },
  {
    file: 'docs/operations.md',
    firstLine: 'METRICS_PORT=9464 pnpm start &',
    reason: 'starts its own server on a fixed metrics port; test/ops/metrics.test.ts covers /metrics',
  },
  {
    file: 'docs/operations.md',
    firstLine: 'docker build -t partner-tags .',
    reason: 'no Docker engine on this machine (the page says so)',
  },
  {
    file: 'packages/sdk/README.md',
    firstLine: 'npm install @partner/sdk',
    reason: 'installs from the npm registry; .ci/run packs the SDK (release:check)',
  },
  {
    file: 'packages/sdk/README.md',
    firstLine: 'pnpm --filter @partner/sdk build',
    reason: "the SDK's development commands (build, typecheck, its suite, publint): pnpm test and .ci/run run them",
  },
  {
    file: 'README.md',
    firstLine: 'export PARTNER_API_KEY=mp_test_...',
    reason:
      "an example in the quick start's second terminal: scripts/start-smoke.mjs runs these lines after `pnpm start`",
  },
  {
    file: 'examples/README.md',
    firstLine: 'pnpm install && pnpm start',
    reason: 'starts the server: .ci/run runs it on a fresh clone (scripts/start-smoke.mjs)',
  },
  {
    file: 'examples/README.md',
    firstLine: 'export PARTNER_API_KEY=mp_test_...',
    reason:
      'runs an example: scripts/start-smoke.mjs runs these lines after `pnpm start`, pnpm examples:smoke every example',
  },
  {
    file: 'examples/README.md',
    firstLine: 'pnpm examples:smoke',
    reason: 'the examples runner itself, run by .ci/run',
  },
];

/** Calls the README says may fail as printed: (block's first line, URL part) -> accepted statuses. */
const EXPECTED_FAILURES: { urlIncludes: string; statuses: number[]; why: string }[] = [
  {
    urlIncludes: '/v1/partners/tag/verify',
    statuses: [422, 503],
    why: 'README: "a failure (422, or 503 when DNS does not answer)" until the CNAME is published',
  },
];

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
  firstLine: string;
}

/** The fenced ```bash / ```sh / ```shell blocks of a Markdown file. */
function shellBlocks(file: string): Block[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(bash|sh|shell)\s*$/.exec(lines[i] as string);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j] as string).startsWith('```')) body.push(lines[j++] as string);
    const firstLine = (body[0] ?? '').replace(/\s+#.*$/, '').trim();
    blocks.push({ file, line: i + 1, lang: open[1] as string, code: body.join('\n'), firstLine });
    i = j;
  }
  return blocks;
}

const blocks = READMES.flatMap(shellBlocks);

/**
 * The SDK README's TypeScript quick start (the ```ts block under "## Quick start"), run as printed
 * with tsx: `@partner/sdk` resolves to the workspace's SDK source through a tsconfig `paths` entry
 * (the package is not installed from npm here, and `pnpm test` builds nothing), and the version
 * constant tsup defines at build time is set on globalThis first. The snippet text is unchanged.
 */
function sdkQuickStart(): string {
  const text = readFileSync(path.join(ROOT, 'packages/sdk/README.md'), 'utf8');
  const section = /^## Quick start\n[\s\S]*?^```ts\n([\s\S]*?)^```/m.exec(text);
  if (!section) throw new Error('packages/sdk/README.md has no ```ts block under "## Quick start"');
  return section[1] as string;
}
const skipOf = (b: Block) => SKIPPED.find((s) => s.file === b.file && s.firstLine === b.firstLine);
const runnable = blocks.filter((b) => !skipOf(b));

// The wrapper: the real curl, unchanged, plus a record of each call (see the header comment).
const CURL_WRAPPER = `#!/usr/bin/env bash
id="$(date +%s%N)-$$"
printf '%s\\n' "$@" > "$SNIPPET_LOG/$id.args"
extra=(-D "$SNIPPET_LOG/$id.headers")
stream=0
for a in "$@"; do case "$a" in -N|--no-buffer|-[a-zA-Z]*N*) stream=1 ;; esac; done
[ "$stream" = 1 ] && extra+=(--max-time "$SNIPPET_STREAM_SECONDS")
"$REAL_CURL" "\${extra[@]}" "$@"
rc=$?
[ "$stream" = 1 ] && [ "$rc" = 28 ] && rc=0
echo "$rc" > "$SNIPPET_LOG/$id.rc"
exit "$rc"
`;

interface Call {
  args: string[];
  status: number | null;
  exitCode: number;
}

function readCalls(dir: string): Call[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.args'))
    .sort()
    .map((f) => {
      const id = f.slice(0, -'.args'.length);
      const read = (ext: string) => {
        try {
          return readFileSync(path.join(dir, `${id}.${ext}`), 'utf8');
        } catch {
          return '';
        }
      };
      const statuses = [...read('headers').matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((m) => Number(m[1]));
      return {
        args: read('args').trimEnd().split('\n'),
        status: statuses.at(-1) ?? null,
        exitCode: Number(read('rc').trim() || '-1'),
      };
    });
}

describe('README snippets, run as printed against a fresh server', () => {
  let work: string;
  let server: ServerProcess;
  let dns: TestDnsServer;
  let apiKey: string;
  let testApiKey: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'readme-snippets-'));
    mkdirSync(path.join(work, 'bin'));
    const realCurl = spawnSync('bash', ['-c', 'command -v curl'], { encoding: 'utf8' }).stdout.trim();
    if (!realCurl) throw new Error('curl is needed to run the README snippets');
    writeFileSync(path.join(work, 'bin/curl'), CURL_WRAPPER.replace('"$REAL_CURL"', JSON.stringify(realCurl)));
    chmodSync(path.join(work, 'bin/curl'), 0o755);
    // Domain verification against a loopback DNS server that knows no record (as for a reader who
    // has not published the CNAME yet): the verify call answers the README's 422, never a slow 503.
    dns = await startTestDnsServer();
    server = await spawnServer({
      env: {
        // What `pnpm start` runs with: the default NODE_ENV (development: the demo partner and its
        // banner), a fresh embedded store; only the port is free instead of 3000.
        NODE_ENV: 'development',
        DATA_DIR: path.join(work, 'data'),
        LOG_LEVEL: 'warn',
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: '1000',
      },
      // A fresh embedded store runs every migration: 7 s on an idle machine, over 60 s once in a
      // loaded CI run (the whole suite on two cores).
      timeoutMs: 180_000,
    });
    const key = /API key:\s+(mp_live_\S+)/.exec(server.output())?.[1];
    if (!key) throw new Error(`no API key in the start banner:\n${server.output()}`);
    apiKey = key;
    testApiKey = /Test key:\s+(mp_test_\S+)/.exec(server.output())?.[1] ?? 'no test key in the start banner';
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await dns?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('every shell block is run here or skipped with a reason, and every skip matches a block', () => {
    const stale = SKIPPED.filter((s) => !blocks.some((b) => b.file === s.file && b.firstLine === s.firstLine));
    expect(stale, 'SKIPPED entries that match no block (README changed?)').toEqual([]);
    expect(runnable.length).toBeGreaterThan(0);
  });

  for (const block of runnable) {
    it(`${block.file}:${block.line} runs as printed (${block.firstLine.slice(0, 60)})`, () => {
      const log = mkdtempSync(path.join(work, 'calls-'));
      const code = block.code
        .replaceAll('mp_live_...', apiKey)
        .replaceAll('mp_test_...', testApiKey)
        .replaceAll('http://localhost:3000', server.url.replace(/\/$/, ''));
      const result = spawnSync('bash', ['-eo', 'pipefail', '-c', code], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 120_000,
        env: {
          ...process.env,
          PATH: `${path.join(work, 'bin')}:${process.env.PATH ?? ''}`,
          SNIPPET_LOG: log,
          SNIPPET_STREAM_SECONDS: String(STREAM_SECONDS),
        },
      });
      const calls = readCalls(log);
      const transcript = `exit ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}\n--- calls\n${calls
        .map((c) => `${c.status} (curl exit ${c.exitCode}) ${c.args.join(' ')}`)
        .join('\n')}`;
      expect(result.status, transcript).toBe(0);
      // Every curl of the block ran (none cut short by an earlier failure).
      const printedCurls = code.match(/(^|[\s$(|])curl\s/gm)?.length ?? 0;
      expect(calls.length, transcript).toBe(printedCurls);
      for (const call of calls) {
        const url = call.args.find((a) => /^https?:\/\//.test(a)) ?? '';
        const allowed = EXPECTED_FAILURES.find((f) => url.includes(f.urlIncludes));
        const ok =
          call.status !== null &&
          ((call.status >= 200 && call.status < 300) || (allowed?.statuses.includes(call.status) ?? false));
        expect(ok, `${call.status} for ${call.args.join(' ')}\n${transcript}`).toBe(true);
        expect(call.exitCode, transcript).toBe(0);
      }
      // The stream resumed after `Last-Event-ID` replays the Purchase the block sent.
      if (code.includes('Last-Event-ID'))
        expect(result.stdout).toMatch(/event: event\s+data: .*"event_name":"Purchase"/);
      // The block's own deadline (120 s) rules: the suite's 30 s cut a 31 s run under CI load.
    }, 150_000);
  }
  it('packages/sdk/README.md: the TypeScript quick start runs as printed (PARTNER_API_KEY, PARTNER_BASE_URL)', () => {
    const dir = mkdtempSync(path.join(work, 'sdk-quickstart-'));
    writeFileSync(path.join(dir, 'quickstart.ts'), sdkQuickStart());
    writeFileSync(
      path.join(dir, 'version.mjs'),
      `globalThis.__SDK_VERSION__ = ${JSON.stringify(JSON.parse(readFileSync(path.join(ROOT, 'packages/sdk/package.json'), 'utf8')).version)};\n`,
    );
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'esnext',
          moduleResolution: 'bundler',
          target: 'es2022',
          paths: { '@partner/sdk': [path.join(ROOT, 'packages/sdk/src/index.ts')] },
        },
      }),
    );
    writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
    const tsx = path.join(ROOT, 'packages/server/node_modules/.bin/tsx');
    const result = spawnSync(tsx, ['--import', './version.mjs', 'quickstart.ts'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, PARTNER_API_KEY: apiKey, PARTNER_BASE_URL: server.url.replace(/\/$/, '') },
    });
    const transcript = `exit ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
    expect(result.status, transcript).toBe(0);
    // What the snippet prints: the record to publish, the failed verify its comment describes (422
    // before the CNAME exists, 503 when DNS does not answer in time), the snippet call with its
    // request id and rate-limit state, and the Purchase it sent, read back by the iterator.
    expect(result.stdout, transcript).toMatch(/^Publish CNAME \S+\.acme-store\.com -> \S+$/m);
    expect(result.stdout, transcript).toMatch(
      /^not verified yet: (422 VALIDATION_ERROR|503 EXTERNAL_SERVICE_ERROR): /m,
    );
    expect(result.stdout, transcript).toMatch(/^\S+ Purchase \{ value: 42 \}$/m);
    // The statistics of that merchant: the Purchase sent, over the 8 days of the range.
    expect(result.stdout, transcript).toMatch(/^1 events from 1 visitors, 1 purchases over 8 days$/m);
    // The call shown with its response: the request id and the server's RateLimit-* state were read.
    expect(result.stdout, transcript).toMatch(/^Paste https?:\/\/\S+ \(request \S+; \d+ of \d+ calls left\)$/m);
  });
});
