// examples/demo-shop in a real Chromium, started as `pnpm example:shop` starts it, with the test
// key: the page loads the real tag through the shop's stand-in for the collector host (no host
// mapping in the browser), and what a visitor does arrives in the event list, under one visitor,
// with its data.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient, type TrackingEvent } from '../../../sdk/src/index.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { hasChromium, launchChromium } from '../helpers/chromium.js';
import { until } from '../helpers/until.js';

const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../examples/demo-shop');

describe.skipIf(!hasChromium)('the demo shop in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let shop: ChildProcess;
  let output = '';

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchChromium();
    // The package's own `start` (tsx, the SDK from source), without pnpm in between.
    const [bin, ...args] = (
      JSON.parse(readFileSync(path.join(EXAMPLE, 'package.json'), 'utf8')).scripts.start as string
    ).split(' ');
    shop = spawn(path.join(EXAMPLE, 'node_modules/.bin', bin as string), args, {
      cwd: EXAMPLE,
      env: {
        ...process.env,
        PARTNER_BASE_URL: server.url.replace(/\/$/, ''),
        PARTNER_API_KEY: server.partner.testApiKey,
        PARTNER_DOMAIN: server.partner.domain,
        SHOP_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    shop.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    shop.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    await until('the shop URL', async () => (/^Demo shop: /m.test(output) ? true : undefined), 90_000);
  }, 120_000);

  afterAll(async () => {
    shop?.kill('SIGTERM');
    await browser?.close();
    await server?.close();
  });

  it('collects the page views and the purchase of a visit, under one visitor, with their data', async () => {
    const url = /^Demo shop: (\S+)/m.exec(output)?.[1] as string;
    const merchantId = /^merchant (\S+), tag/m.exec(output)?.[1] as string;
    const context = await browser.newContext();
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(url);
    await tab.getByRole('link', { name: 'Trail boots' }).click();
    await tab.waitForURL(/\/product\/BOOT-TR$/);
    await tab.getByRole('button', { name: 'Buy now' }).click();
    await tab.waitForURL(/\/thanks$/);
    // The side panel reads the API through the shop's backend: the purchase shows there too.
    await tab.locator('#activity').getByText('Purchase', { exact: false }).first().waitFor({ timeout: 20_000 });

    const client = new PartnerClient({ apiKey: server.partner.testApiKey, baseURL: server.url });
    const events: TrackingEvent[] = await until(
      'the visit in the event list',
      async () => {
        const listed = await client.events.list({ merchantId, sortOrder: 'asc' }).toArray({ limit: 50 });
        return listed.length >= 6 ? listed : undefined;
      },
      20_000,
    );
    // Compared without their order. The two pages left sent their Engagement (issue 52).
    expect(events.map((e) => e.event_name).sort()).toEqual([
      'Engagement',
      'Engagement',
      'PageView',
      'PageView',
      'PageView',
      'Purchase',
    ]);
    const engaged = events.filter((e) => e.event_name === 'Engagement').map((e) => (e.data as { path: string }).path);
    expect(engaged.sort()).toEqual(['/', '/product/BOOT-TR']);
    expect(new Set(events.map((e) => e.muid)).size).toBe(1);
    const paths = events.filter((e) => e.event_name === 'PageView').map((e) => (e.data as { path: string }).path);
    expect(paths.sort()).toEqual(['/', '/product/BOOT-TR', '/thanks']);
    expect(events.find((e) => e.event_name === 'Purchase')?.data).toEqual({
      sku: 'BOOT-TR',
      value: 129.5,
      currency: 'EUR',
    });
    expect(errors).toEqual([]);
    await context.close();
  });
});
