#!/usr/bin/env node
// A partner's project outside this workspace, built from `pnpm pack` tarballs only (CI step
// "outside project"):
//   node scripts/outside-project.mjs
// 1. packs @partner/sdk and @partner/trpc (built first when their dist/ is missing) into a temp dir;
//    @partner/shared-schemas is not packed: the SDK bundles what it uses of it;
// 2. creates a fresh npm project in a mktemp dir outside the repository that installs ONLY those
//    two tarballs plus public npm packages (@trpc/client, @trpc/server, typescript, @types/node;
//    versions pinned) with `npm install`, and checks nothing of the server came with them;
// 3. type-checks its src/main.ts with `tsc --noEmit` (strict, skipLibCheck off: every declaration
//    the packages ship must resolve): a typed tRPC client from @partner/trpc's AppRouter, the SDK's
//    `.withResponse()`, and `@ts-expect-error` lines that fail if the types were `any`;
// 4. compiles and RUNS it against a real server (embedded PGlite, a partner onboarded with the CLI)
//    and checks the answers. Exits non-zero on any failure.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root, run, startPartnerServer } from './lib/partner-server.mjs';

/** Public npm packages the project installs, pinned to versions that run on Node 20 (stack notes). */
export const NPM_DEPENDENCIES = {
  '@trpc/client': '11.25.2',
  '@trpc/server': '11.25.2',
};
export const NPM_DEV_DEPENDENCIES = { typescript: '5.9.3', '@types/node': '~20.19.0' };
export const PACKED = ['@partner/sdk', '@partner/trpc'];

const log = (line) => process.stdout.write(`[outside] ${line}\n`);

/** Builds what is missing and packs the public packages into `dir`; resolves with { name: tarball path }. */
export async function packTarballs(dir, { log: say = log, names = PACKED } = {}) {
  const packageDirs = { '@partner/sdk': 'packages/sdk', '@partner/trpc': 'packages/trpc' };
  const missing = names.filter((name) => !existsSync(path.join(root, packageDirs[name], 'dist/index.d.ts')));
  if (missing.length > 0) {
    say(`building ${missing.join(', ')} (no dist/)`);
    const build = await run('pnpm', ['--silent', ...missing.flatMap((name) => ['--filter', name]), 'build']);
    if (build.code !== 0) throw new Error(`build failed (exit ${build.code}): ${build.stderr.slice(-2000)}`);
  }
  const tarballs = {};
  for (const name of names) {
    const packed = await run('pnpm', ['pack', '--json', '--pack-destination', dir], {
      cwd: path.join(root, packageDirs[name]),
    });
    if (packed.code !== 0) throw new Error(`pnpm pack ${name} failed: ${packed.stderr.slice(-2000)}`);
    const { filename, files } = JSON.parse(packed.stdout);
    tarballs[name] = path.isAbsolute(filename) ? filename : path.join(dir, path.basename(filename));
    say(`packed ${name}: ${path.basename(tarballs[name])} (${files.length} files)`);
  }
  return tarballs;
}

/** `npm install` in `dir`; throws with npm's output on failure. */
export async function npmInstall(dir, what) {
  const started = Date.now();
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: { npm_config_update_notifier: 'false' },
  });
  if (installed.code !== 0) {
    throw new Error(`npm install (${what}) failed: ${(installed.stderr || installed.stdout).slice(-3000)}`);
  }
  return ((Date.now() - started) / 1000).toFixed(1);
}

const MAIN_TS = `// A partner's program: @partner/trpc's AppRouter for a typed tRPC client, and @partner/sdk.
import { APIError, type Merchant, PartnerClient } from '@partner/sdk';
import type { AppRouter } from '@partner/trpc';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';

type Inputs = inferRouterInputs<AppRouter>;
type Outputs = inferRouterOutputs<AppRouter>;
type TrpcMerchant = Outputs['merchant']['list']['merchants'][number];

const apiKey = process.env.PARTNER_API_KEY ?? '';
const baseURL = process.env.PARTNER_BASE_URL ?? '';
const partnerDomain = process.env.PARTNER_DOMAIN ?? '';
const failures: string[] = [];
function check(ok: boolean, what: string): void {
  console.log(\`\${ok ? 'ok  ' : 'FAIL'} \${what}\`);
  if (!ok) failures.push(what);
}

const trpc = createTRPCClient<AppRouter>({
  links: [httpBatchLink({ url: \`\${baseURL}/trpc\`, headers: () => ({ authorization: \`Bearer \${apiKey}\` }) })],
});
const sdk = new PartnerClient({ apiKey, baseURL });

/** Never called: each line must be a type error, or tsc fails on the unused directive (types are not \`any\`). */
export async function typeErrors(error: TRPCClientError<AppRouter>): Promise<void> {
  // @ts-expect-error: limit is a number
  await trpc.merchant.list.query({ limit: 'ten' });
  // @ts-expect-error: no such procedure
  await trpc.merchant.remove.mutate({ merchantId: 'x' });
  // @ts-expect-error: the output has no such field
  (await trpc.merchant.create.mutate({ name: 'x' })).id;
  // @ts-expect-error: not one of the server's error codes
  if (error.data?.code === 'NO_SUCH_CODE') return;
  // @ts-expect-error: the SDK's merchant has no such field
  (await sdk.merchants.create({ name: 'x' })).id;
}

async function main(): Promise<void> {
  const runId = Date.now().toString(36);

  // tRPC, typed by AppRouter
  const input: Inputs['merchant']['create'] = { name: \`Outside Store \${runId}\` };
  const { merchantId } = await trpc.merchant.create.mutate(input);
  check(typeof merchantId === 'string' && merchantId.length > 0, \`trpc merchant.create -> merchantId \${merchantId}\`);
  const listed = await trpc.merchant.list.query({ page: 1, limit: 100 });
  const mine: TrpcMerchant | undefined = listed.merchants.find((m) => m.merchantId === merchantId);
  const hasNextPage: boolean = listed.pagination.hasNextPage;
  check(mine?.name === input.name, \`trpc merchant.list finds it (\${listed.merchants.length} merchants, next page: \${hasNextPage})\`);
  const tag = await trpc.tag.generate.mutate({ merchantId, domain: \`shop-\${runId}.\${partnerDomain}\` });
  const status: 'active' | 'inactive' | 'waiting_for_events' = tag.status;
  check(status === 'active', \`trpc tag.generate (preverified) -> \${status}\`);
  try {
    await trpc.events.list.query({ merchantId: '00000000-0000-4000-8000-000000000000' });
    check(false, 'trpc events.list of an unknown merchant fails');
  } catch (error) {
    const code = error instanceof TRPCClientError ? (error as TRPCClientError<AppRouter>).data?.code : undefined;
    check(code === 'MERCHANT_NOT_FOUND', \`trpc events.list of an unknown merchant -> \${code}\`);
  }

  // The SDK
  const sent = await sdk.events.send({
    tagId: tag.tagId,
    events: [
      { event_name: 'PageView', data: { path: '/' } },
      { event_name: 'AddToCart', data: { sku: 'A-1' } },
      { event_name: 'Purchase', data: { value: 42.5 } },
    ],
  });
  check(sent.accepted === 3, \`sdk events.send -> accepted \${sent.accepted}\`);
  const { data: page, response, requestId } = await sdk.merchants.list({ limit: 100 }).withResponse();
  const merchants: Merchant[] = page.data;
  check(
    response.status === 200 && merchants.some((m) => m.merchantId === merchantId),
    \`sdk merchants.list().withResponse() -> HTTP \${response.status}, request \${requestId}, \${merchants.length} merchants\`,
  );
  const names: string[] = [];
  for await (const event of sdk.events.list({ merchantId, limit: 2, sortOrder: 'asc' })) names.push(event.event_name);
  check(names.length === 3, \`sdk events.list iterated over pages of 2 -> \${names.join(', ')}\`);
  const viaTrpc = await trpc.events.list.query({ merchantId, limit: 100 });
  check(viaTrpc.events.length === 3, \`trpc events.list -> \${viaTrpc.events.length} events\`);
  try {
    await sdk.merchants.list({ limit: 500 });
    check(false, 'sdk merchants.list limit=500 fails');
  } catch (error) {
    check(error instanceof APIError && error.status === 400, \`sdk merchants.list limit=500 -> \${(error as APIError).status} \${(error as APIError).code}\`);
  }
}

main().then(
  () => {
    console.log(failures.length === 0 ? 'outside project: all checks passed' : \`outside project: \${failures.length} check(s) failed\`);
    process.exit(failures.length === 0 ? 0 : 1);
  },
  (error: unknown) => {
    console.error('outside project: failed:', error);
    process.exit(1);
  },
);
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    // DOM: @trpc/client's own declarations name `RequestInfo` (as tRPC's docs assume a DOM lib).
    lib: ['ES2023', 'DOM'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    types: ['node'],
    outDir: 'out',
  },
  include: ['src'],
};

async function main() {
  const started = Date.now();
  const work = mkdtempSync(path.join(tmpdir(), 'partner-outside-'));
  if (path.resolve(work).startsWith(`${root}${path.sep}`)) throw new Error(`${work} is inside the repository`);
  let server;
  try {
    const tarballs = await packTarballs(path.join(work, 'tarballs'));
    const project = path.join(work, 'project');
    mkdirSync(path.join(project, 'src'), { recursive: true });
    writeFileSync(
      path.join(project, 'package.json'),
      `${JSON.stringify(
        {
          name: 'partner-outside-project',
          private: true,
          type: 'module',
          dependencies: { '@partner/sdk': `file:${tarballs['@partner/sdk']}`, ...NPM_DEPENDENCIES },
          devDependencies: { '@partner/trpc': `file:${tarballs['@partner/trpc']}`, ...NPM_DEV_DEPENDENCIES },
        },
        null,
        2,
      )}\n`,
    );
    writeFileSync(path.join(project, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
    writeFileSync(path.join(project, 'src/main.ts'), MAIN_TS);
    log(
      `project ${project}: npm install (the two tarballs, ${Object.keys({ ...NPM_DEPENDENCIES, ...NPM_DEV_DEPENDENCIES }).join(', ')})`,
    );
    const seconds = await npmInstall(project, 'outside project');
    const scoped = readdirSync(path.join(project, 'node_modules/@partner')).sort();
    log(`installed in ${seconds} s; node_modules/@partner: ${scoped.join(', ')}`);
    if (scoped.join() !== '@partner/sdk,@partner/trpc'.replaceAll('@partner/', '')) {
      throw new Error(`node_modules/@partner holds ${scoped.join(', ')}: only sdk and trpc expected`);
    }
    const trpcFiles = readdirSync(path.join(project, 'node_modules/@partner/trpc/dist')).sort();
    log(`@partner/trpc installed files: dist/${trpcFiles.join(', dist/')}`);
    for (const forbidden of ['zod', 'drizzle-orm', '@electric-sql', 'trpc-to-openapi']) {
      if (existsSync(path.join(project, 'node_modules', forbidden))) throw new Error(`${forbidden} was installed`);
    }

    const tsc = path.join(project, 'node_modules/typescript/bin/tsc');
    const check = await run(process.execPath, [tsc, '--noEmit', '-p', '.'], { cwd: project });
    if (check.code !== 0) throw new Error(`tsc --noEmit failed:\n${check.stdout}${check.stderr}`);
    log('tsc --noEmit (strict, skipLibCheck: false): no errors');
    const build = await run(process.execPath, [tsc, '-p', '.'], { cwd: project });
    if (build.code !== 0) throw new Error(`tsc failed:\n${build.stdout}${build.stderr}`);

    server = await startPartnerServer({ log, partnerDomain: 'outside-partner.com' });
    const result = await run(process.execPath, ['out/main.js'], {
      cwd: project,
      env: { PARTNER_API_KEY: server.apiKey, PARTNER_BASE_URL: server.baseUrl, PARTNER_DOMAIN: server.partnerDomain },
      timeoutMs: 120_000,
      onLine: (line) => log(`  main.js | ${line}`),
    });
    if (result.code !== 0) throw new Error(`the outside project's program failed (exit ${result.code})`);
    log(`PASS in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await server?.stop();
    if (!process.env.KEEP_OUTSIDE_PROJECT) rmSync(work, { recursive: true, force: true });
    else log(`kept ${work}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    log(`FAIL: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
