// examples/merchant-dashboard in a real Chromium: its backend (a separate process, run as its
// README says) seeds a merchant through the collector; the numbers the page shows (read from its
// accessible tables and summary) equal the statistics API's answers fetched directly; the chart is
// drawn; no serious or critical axe-core violation. A screenshot goes to .ci/artifacts/.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { hasChromium, launchChromium } from '../helpers/chromium.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const EXAMPLE = path.join(ROOT, 'examples/merchant-dashboard');
const SCREENSHOT = path.join(ROOT, '.ci/artifacts/merchant-dashboard.png');
const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

/**
 * Starts the example's backend with tsx, `@partner/sdk` resolved to the SDK's source (a tsconfig
 * `paths` entry: `pnpm test` builds nothing) and the version constant tsup would define set first.
 * Resolves with its URL once it prints it (after seeding).
 */
function startDashboard(
  server: TestServer,
  work: string,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
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
        DASHBOARD_PORT: '0',
        DASHBOARD_TIMEZONE: 'UTC',
        MERCHANT_ID: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the dashboard printed no URL within 90 s:\n${output}`)), 90_000);
    const check = () => {
      const match = /^dashboard of merchant \S+: (\S+)$/m.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] as string, output: () => output });
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the dashboard exited with ${code}:\n${output}`));
    });
  });
}

/** The body rows of the table named `name` (its caption), each as its cells' text. */
async function tableRows(page: Page, name: string): Promise<string[][]> {
  return page
    .getByRole('table', { name, exact: true })
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => (cell.textContent ?? '').trim())));
}

const count = (text: string) => Number(text.replace(/,/g, ''));
const amount = (text: string) => Number(text.replace(/[^0-9.-]/g, ''));
const percent = new Intl.NumberFormat('en-US', {
  style: 'percent',
  maximumFractionDigits: 1,
  minimumFractionDigits: 1,
  signDisplay: 'always',
});

describe.skipIf(!hasChromium)('examples/merchant-dashboard in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let dashboard: Awaited<ReturnType<typeof startDashboard>>;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'merchant-dashboard-'));
    server = await startTestServer();
    dashboard = await startDashboard(server, work);
    browser = await launchChromium();
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    dashboard?.child.kill('SIGTERM');
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('shows the numbers the statistics API answers, draws the chart, and passes axe-core', async () => {
    // The page's CSP allows only its own scripts; axe-core is injected by the test.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(dashboard.url);
    await page.locator('main[aria-busy="false"]').waitFor();
    expect(errors, dashboard.output()).toEqual([]);
    await expect.poll(() => page.locator('#status').isHidden()).toBe(true);

    // The range the page shows, then the API's answers for it, fetched directly.
    const rangeText = (await page.locator('#range').textContent()) ?? '';
    const range = /(\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2}) \((\S+)\)/.exec(rangeText);
    expect(range, rangeText).not.toBeNull();
    const [, startDate, endDate, timezone] = range as RegExpExecArray;
    const merchantId = /^dashboard of merchant (\S+):/m.exec(dashboard.output())?.[1] as string;
    const query = `merchantId=${merchantId}&startDate=${startDate}&endDate=${endDate}&timezone=${timezone}`;
    const get = async (route: string) => {
      const res = await api(server, server.partner.apiKey).get(`/v1/partners/stats/${route}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as Json;
    };
    const summary = await get(`summary?${query}&compare=previous`);
    const daily = await get(`timeseries?${query}&interval=day`);
    const breakdown = (dimension: string) => get(`breakdown?${query}&dimension=${dimension}&limit=10`);
    const totals = summary.totals;
    expect(totals.events).toBeGreaterThan(100);
    expect(totals.purchases).toBeGreaterThan(0);

    // The summary: each figure and its change against the previous 30 days ("+12.5%").
    const kpi = async (metric: string) => {
      const item = page.locator(`#kpis [data-metric="${metric}"]`);
      return {
        value: ((await item.locator('.kpi-value').textContent()) ?? '').trim(),
        change: ((await item.locator('.kpi-change').textContent()) ?? '').trim(),
      };
    };
    const expectedChange = (current: number, previous: number) => {
      if (previous === 0) return current === 0 ? 'no change' : 'new this period';
      return percent.format((current - previous) / previous);
    };
    for (const metric of ['events', 'visitors', 'pageviews', 'purchases'] as const) {
      const shown = await kpi(metric);
      expect(count(shown.value), metric).toBe(totals[metric]);
      expect(shown.change, metric).toBe(expectedChange(totals[metric], summary.previous.totals[metric]));
    }
    expect(totals.revenue.length).toBeGreaterThan(0);
    for (const { currency, amount: sum } of totals.revenue as { currency: string; amount: string }[]) {
      const shown = await kpi(`revenue-${currency}`);
      expect(amount(shown.value), currency).toBe(Number(sum));
      const before = summary.previous.totals.revenue.find((r: { currency: string }) => r.currency === currency);
      expect(shown.change, currency).toBe(expectedChange(Number(sum), Number(before?.amount ?? 0)));
    }

    // What a person sees on load (the daily table still folded).
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // The daily numbers behind the chart, in their table (opened as a reader would).
    await page.getByText('Daily numbers as a table').click();
    const days = await tableRows(page, 'Daily numbers');
    expect(days).toHaveLength(30);
    expect(days.map((d) => d.slice(0, 5).map((cell, i) => (i === 0 ? cell : count(cell))))).toEqual(
      (daily.points as Json[]).map((p) => [p.start.slice(0, 10), p.events, p.visitors, p.pageviews, p.purchases]),
    );

    // Top pages, referrers and utm sources, with `other` when the API has one.
    for (const [name, dimension] of [
      ['Top pages', 'path'],
      ['Top referrers', 'referrer'],
      ['Top UTM sources', 'utm_source'],
    ] as const) {
      const answer = await breakdown(dimension);
      const rows = [...answer.rows, ...(answer.other ? [answer.other] : [])] as Json[];
      expect(rows.length, name).toBeGreaterThan(0);
      const shown = await tableRows(page, name);
      expect(
        shown.map(([value, events, visitors]) => [value, count(events as string), count(visitors as string)]),
        name,
      ).toEqual(rows.map((r) => [r.value, r.events, r.visitors]));
    }

    // The chart: uPlot's canvas, sized, with drawn pixels.
    // (Page-side code as strings: this package's TypeScript has no DOM types.)
    const drawn = await page.evaluate<{ width: number; height: number; painted: number }>(`(() => {
      const canvas = document.querySelector('#chart canvas');
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
      return { width: canvas.width, height: canvas.height, painted };
    })()`);
    expect(drawn.width).toBeGreaterThan(300);
    expect(drawn.height).toBeGreaterThan(200);
    expect(drawn.painted).toBeGreaterThan(drawn.width * 5);

    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate<{ id: string; impact: string; help: string; targets: string[] }[]>(`
      axe.run(document, { resultTypes: ['violations'] }).then((result) =>
        result.violations.map((v) => ({
          id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')),
        })),
      )`);
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    await context.close();
  }, 60_000);
});
