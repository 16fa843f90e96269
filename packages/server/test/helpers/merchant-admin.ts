// examples/merchant-admin for the browser tests of <partner-tags-dashboard>: the element's bundle
// built from source, the example's backend started as its README says, and reading the element's
// tables back.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { TestServer } from '../../src/testing/index.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const EXAMPLE = path.join(ROOT, 'examples/merchant-admin');
const ELEMENTS = path.join(ROOT, 'packages/elements');
const require = createRequire(import.meta.url);

export const DASHBOARD = 'partner-tags-dashboard';

/** The element's standalone bundle, from source (the SDK's too): `pnpm test` builds nothing else. */
export function buildElementBundle(): void {
  execFileSync(path.join(ELEMENTS, 'node_modules/.bin/tsup'), ['--config', 'tsup.bundle.config.ts', '--silent'], {
    cwd: ELEMENTS,
    stdio: 'pipe',
    timeout: 60_000,
  });
}

export interface Admin {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/**
 * Starts the example's backend with tsx, `@partner/sdk` resolved to the SDK's source (as the
 * dashboard test does), `env` over the test's settings (`MERCHANT_ID` empty: it seeds a demo
 * merchant). Resolves with its URL once it prints it (after seeding).
 */
export function startAdmin(server: TestServer, work: string, env: Record<string, string>): Promise<Admin> {
  const sdkVersion = require(path.join(ROOT, 'packages/sdk/package.json')).version as string;
  writeFileSync(path.join(work, 'version.mjs'), `globalThis.__SDK_VERSION__ = ${JSON.stringify(sdkVersion)};\n`);
  writeFileSync(
    path.join(work, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'esnext',
        moduleResolution: 'bundler',
        target: 'es2022',
        paths: { '@partner/sdk': [path.join(ROOT, 'packages/sdk/src/index.ts')] },
      },
    }),
  );
  const tsx = path.join(ROOT, 'packages/server/node_modules/.bin/tsx');
  const child = spawn(
    tsx,
    ['--tsconfig', path.join(work, 'tsconfig.json'), '--import', path.join(work, 'version.mjs'), 'src/main.ts'],
    {
      cwd: EXAMPLE,
      env: {
        ...process.env,
        PARTNER_BASE_URL: server.url.replace(/\/$/, ''),
        PARTNER_API_KEY: server.partner.apiKey,
        PARTNER_DOMAIN: server.partner.domain,
        ADMIN_PORT: '0',
        ADMIN_TIMEZONE: 'UTC',
        MERCHANT_ID: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk;
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the admin printed no URL within 90 s:\n${output}`)), 90_000);
    child.stdout?.on('data', () => {
      const match = /^merchant admin of merchant \S+: (\S+)$/m.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] as string, output: () => output });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the admin exited with ${code}:\n${output}`));
    });
  });
}

/** Waits for the element to show a loaded range. */
export async function waitReady(page: Page): Promise<void> {
  await page.locator(`${DASHBOARD}[data-state="ready"]`).waitFor({ timeout: 20_000 });
}

/** The body rows of the element's table named `name` (its caption), each as its cells' text. */
export function tableRows(page: Page, name: string): Promise<string[][]> {
  return page
    .getByRole('table', { name, exact: true })
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => (cell.textContent ?? '').trim())));
}

export const count = (text: string) => Number(text.replace(/,/g, ''));
export const amount = (text: string) => Number(text.replace(/[^0-9.-]/g, ''));

const percent = new Intl.NumberFormat('en-US', {
  style: 'percent',
  maximumFractionDigits: 1,
  minimumFractionDigits: 1,
  signDisplay: 'always',
});

/** A card's change against the previous period, as the element words it. */
export function expectedChange(current: number, previous: number): string {
  if (previous === 0) return current === 0 ? 'no change' : 'new this period';
  return percent.format((current - previous) / previous);
}

/** A card of the element's summary: its value and its change (without the screen-reader words). */
export async function kpi(page: Page, metric: string): Promise<{ value: string; change: string }> {
  const item = page.locator(`${DASHBOARD} [data-metric="${metric}"]`);
  return {
    value: ((await item.locator('.kpi-value').textContent()) ?? '').trim(),
    change: ((await item.locator('.kpi-change').textContent()) ?? '').replace(/compared with.*/, '').trim(),
  };
}
