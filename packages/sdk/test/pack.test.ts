// Packs the SDK as it would be published, installs the tarball into a scratch project (ky comes from
// the registry) and loads it from ESM and from CommonJS, making a real request with each.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};

const EXPECTED_EXPORTS = [
  'APIConnectionError',
  'APIConnectionTimeoutError',
  'APIError',
  'APIPromise',
  'APIUserAbortError',
  'AuthenticationError',
  'BadRequestError',
  'ConflictError',
  'Erasures',
  'EventExport',
  'EventStream',
  'Events',
  'Goals',
  'InternalServerError',
  'MerchantClient',
  'MerchantSessions',
  'MerchantTags',
  'Merchants',
  'NotFoundError',
  'Page',
  'PagePromise',
  'PartnerClient',
  'PartnerError',
  'PermissionDeniedError',
  'RateLimitError',
  'Settings',
  'Stats',
  'Tags',
  'TestHelpers',
  'UnprocessableEntityError',
  'VERSION',
  'WEBHOOK_TOLERANCE_SECONDS',
  'WebhookDeliveries',
  'WebhookVerificationError',
  'Webhooks',
  'parseRateLimit',
  'unwrapWebhook',
];

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** Builds dist when it is missing or older than the sources or the build config. */
function ensureBuilt(): void {
  let built = 0;
  try {
    built = Math.min(
      ...['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts'].map((f) => newestMtime(join(pkgDir, 'dist', f))),
    );
  } catch {
    built = 0;
  }
  const sources = Math.max(
    newestMtime(join(pkgDir, 'src')),
    newestMtime(join(pkgDir, 'package.json')),
    newestMtime(join(pkgDir, 'tsup.config.ts')),
  );
  if (built < sources) execFileSync('pnpm', ['run', 'build'], { cwd: pkgDir, stdio: 'pipe' });
}

const script = (kind: 'esm' | 'cjs') => `
${kind === 'esm' ? "import * as sdk from '@partner/sdk';" : "const sdk = require('@partner/sdk');"}
const client = new sdk.PartnerClient({ apiKey: 'mp_live_pack', baseURL: process.env.BASE_URL, maxRetries: 0 });
let notFound;
try {
  await client.tags.verify({ tagId: 'missing', subdomain: 'a.example.com' });
} catch (error) {
  notFound = { name: error.name, isNotFound: error instanceof sdk.NotFoundError, isApiError: error instanceof sdk.APIError, code: error.code, requestId: error.requestId };
}
const created = await client.merchants.create({ name: 'Packed' });
const withResponse = await client.merchants.create({ name: 'Shown' }).withResponse();
const retrieving = client.tags.retrieve('t');
const raw = await retrieving.asResponse();
const shown = { data: withResponse.data, status: withResponse.response.status, requestId: withResponse.requestId, isAPIPromise: retrieving instanceof sdk.APIPromise && retrieving instanceof Promise, rawUnread: raw.bodyUsed === false };
const names = [];
for await (const m of client.merchants.list({ limit: 1 })) names.push(m.name);
console.log(JSON.stringify({ keys: Object.keys(sdk).filter((k) => k !== 'default' && k !== '__esModule').sort(), hasDefault: 'default' in sdk, version: sdk.VERSION, created, names, notFound, shown }));
`;

let scratch: string;
let server: Server;
let baseURL: string;
const seenHeaders: Record<string, string | undefined>[] = [];

beforeAll(async () => {
  ensureBuilt();
  scratch = mkdtempSync(join(tmpdir(), 'partner-sdk-pack-'));
  execFileSync('pnpm', ['pack', '--pack-destination', scratch], { cwd: pkgDir, stdio: 'pipe' });
  const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('pnpm pack produced no tarball');
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
  execFileSync('npm', ['install', join(scratch, tarball), '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: scratch,
    stdio: 'pipe',
  });
  server = createServer((req, res) => {
    seenHeaders.push({ sdk: req.headers['x-partner-sdk'] as string, key: req.headers['idempotency-key'] as string });
    res.setHeader('content-type', 'application/json');
    res.setHeader('x-request-id', 'req_pack');
    if (req.url?.startsWith('/v1/partners/tag/verify')) {
      res.statusCode = 404;
      res.end(JSON.stringify({ message: 'Tag not found', code: 'TAG_NOT_FOUND' }));
    } else if (req.method === 'POST') {
      res.statusCode = 201;
      res.end(JSON.stringify({ merchantId: 'm-1' }));
    } else {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const merchants = page <= 2 ? [{ merchantId: `m-${page}`, name: `M${page}`, createdAt: '', tags: [] }] : [];
      res.end(JSON.stringify({ merchants, pagination: { page, limit: 1, total: 2, totalPages: 2 } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 240_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Runs a check script in a child process (asynchronously: the test server lives in this process). */
async function run(kind: 'esm' | 'cjs'): Promise<Record<string, unknown>> {
  const file = join(scratch, kind === 'esm' ? 'check.mjs' : 'check.cjs');
  // CommonJS has no top-level await: wrap the same body in an async function.
  const body =
    kind === 'esm'
      ? script('esm')
      : `(async () => {${script('cjs')}})().catch((e) => { console.error(e); process.exit(1); });`;
  writeFileSync(file, body);
  const { stdout } = await promisify(execFile)(process.execPath, [file], {
    cwd: scratch,
    env: { ...process.env, BASE_URL: baseURL },
    timeout: 30_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
}

describe('packed tarball', () => {
  it('contains only dist, README and package.json; depends only on ky', () => {
    const installed = join(scratch, 'node_modules', '@partner', 'sdk');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies).toEqual({ ky: pkg.dependencies.ky });
    expect(manifest.private).toBeUndefined();
    const top = readdirSync(installed).sort();
    expect(top).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'dist', 'package.json']));
    for (const entry of top) expect(['CHANGELOG.md', 'LICENSE', 'README.md', 'dist', 'package.json']).toContain(entry);
    expect(readdirSync(join(installed, 'dist')).sort()).toEqual([
      'index.cjs',
      'index.cjs.map',
      'index.d.cts',
      'index.d.ts',
      'index.js',
      'index.js.map',
    ]);
    const kyVersion = (
      JSON.parse(readFileSync(join(scratch, 'node_modules', 'ky', 'package.json'), 'utf8')) as { version: string }
    ).version;
    expect(kyVersion).toMatch(/^1\./);
  });

  it('dist has no zod, no @partner/shared-schemas and no Node built-in', () => {
    const dist = join(scratch, 'node_modules', '@partner', 'sdk', 'dist');
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
      const text = readFileSync(join(dist, file), 'utf8');
      expect(text, file).not.toMatch(/zod/);
      expect(text, file).not.toMatch(/@partner\/shared-schemas/);
      expect(text, file).not.toMatch(/from ["']node:|require\(["']node:|import\(["']node:/);
      // The only module the runtime code loads is ky.
      const specifiers = [...text.matchAll(/(?:from\s+|import\(|require\()["']([^"']+)["']/g)].map((m) => m[1]);
      expect(new Set(specifiers), file).toEqual(new Set(file.includes('.d.') ? [] : ['ky']));
    }
  });

  it('loads from ESM: named exports only, and it works', async () => {
    const result = await run('esm');
    expect(result.keys).toEqual(EXPECTED_EXPORTS);
    expect(result.hasDefault).toBe(false);
    expect(result.version).toBe(pkg.version);
    expect(result.created).toEqual({ merchantId: 'm-1' });
    expect(result.names).toEqual(['M1', 'M2']);
    expect(result.shown).toEqual({
      data: { merchantId: 'm-1' },
      status: 201,
      requestId: 'req_pack',
      isAPIPromise: true,
      rawUnread: true,
    });
    expect(result.notFound).toEqual({
      name: 'NotFoundError',
      isNotFound: true,
      isApiError: true,
      code: 'TAG_NOT_FOUND',
      requestId: 'req_pack',
    });
  });

  it('loads from CommonJS (require) with the same exports, and it works', async () => {
    const result = await run('cjs');
    expect(result.keys).toEqual(EXPECTED_EXPORTS);
    expect(result.hasDefault).toBe(false);
    expect(result.created).toEqual({ merchantId: 'm-1' });
    expect(result.names).toEqual(['M1', 'M2']);
    expect(result.shown).toEqual({
      data: { merchantId: 'm-1' },
      status: 201,
      requestId: 'req_pack',
      isAPIPromise: true,
      rawUnread: true,
    });
    expect(result.notFound).toMatchObject({ name: 'NotFoundError', isNotFound: true, code: 'TAG_NOT_FOUND' });
    expect(seenHeaders.some((h) => h.sdk === `partner-sdk-ts/${pkg.version}`)).toBe(true);
  });
});
