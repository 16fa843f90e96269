import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { listOperations } from '../src/testing/openapi-contract.js';
import { CHROMIUM, chromiumArgs, hasChromium } from './helpers/chromium.js';

const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.ci/artifacts');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('GET /docs', () => {
  it('serves the reference page under a self-only Content-Security-Policy', async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//); // no CDN, no remote origin
    for (const asset of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const assetRes = await fetch(`${server.url}${asset[1]}`);
      expect(assetRes.status, asset[1]).toBe(200);
      expect((await assetRes.arrayBuffer()).byteLength, asset[1]).toBeGreaterThan(0);
    }
    expect((await fetch(`${server.url}/docs/`)).status).toBe(200);
  });

  it('answers 404 { message, code } for other files, and 405 (Allow: GET, HEAD) to other methods', async () => {
    for (const p of ['/docs/package.json', '/docs/../package.json', '/docs/swagger-ui.js.map', '/docs/index.html']) {
      const res = await fetch(`${server.url}${p}`);
      expect(res.status, p).toBe(404);
      expect(await res.json()).toEqual({ message: expect.any(String), code: 'NOT_FOUND' });
    }
    const post = await fetch(`${server.url}/docs`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${server.url}/docs/swagger-ui.css`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
  });
});

describe.skipIf(!hasChromium)(`GET /docs in a real browser (${CHROMIUM})`, () => {
  let context: BrowserContext;
  let profile: string;
  beforeAll(async () => {
    profile = mkdtempSync(path.join(tmpdir(), 'docs-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: chromiumArgs(),
      viewport: { width: 1280, height: 1600 },
    });
  });
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('lists every operation of /openapi.json, loads nothing remote, breaks no CSP rule', async () => {
    const doc = await (await fetch(`${server.url}/openapi.json`)).json();
    const operations = listOperations(doc);
    expect(operations.length).toBeGreaterThan(0);

    const page = await context.newPage();
    const origins = new Set<string>();
    const problems: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith('data:')) origins.add(new URL(url).origin);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${server.url}/docs`, { waitUntil: 'load' });
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });

    const listed = await page
      .locator('.opblock')
      .evaluateAll((blocks) =>
        blocks.map(
          (block) =>
            `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
        ),
      );
    const expected = operations.map((op) => `${op.method} ${op.path}`);
    expect([...listed].sort()).toEqual([...expected].sort());
    await expect(page.title()).resolves.toBe('Partner Tags API reference');
    expect(await page.locator('.info .title').textContent()).toContain('Partner Tags API');
    expect([...origins]).toEqual([server.url]);
    expect(problems).toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, 'docs.png');
    await page.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(10_000);
  });

  // The document's server URL is relative (no PUBLIC_BASE_URL), so "Try it out" calls the origin
  // the page was opened at, whichever name reached the server: no CSP refusal, a real 201.
  it.each(['127.0.0.1', 'localhost'])(
    '"Try it out" creates a merchant from the page opened at http://%s',
    async (host) => {
      const origin = `http://${host}:${new URL(server.url).port}`;
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${origin}/docs`, { waitUntil: 'load' });
      await page.locator('.opblock').first().waitFor({ timeout: 20_000 });

      // Authorize with the partner's key (the bearer scheme).
      await page.locator('.auth-wrapper .authorize').click();
      // The API key's scheme is listed first (the merchant session's after it).
      const keyForm = page.locator('.modal-ux .auth-container').first();
      await keyForm.locator('input').fill(server.partner.apiKey);
      await keyForm.locator('.auth-btn-wrapper .authorize').click();
      await page.locator('.modal-ux .btn-done').first().click();

      // POST /v1/partners/merchant with the document's example body, executed from the page.
      const block = page.locator('#operations-Merchants-merchant-create');
      await block.locator('.opblock-summary').click();
      await block.locator('.try-out__btn').click();
      const name = `Docs ${host} ${Date.now()}`;
      await block.locator('textarea.body-param__text').fill(JSON.stringify({ name }));
      const answered = page.waitForResponse((res) => res.url() === `${origin}/v1/partners/merchant`);
      await block.locator('.execute').click();
      const response = await answered;
      expect(response.status()).toBe(201);
      await expect
        .poll(() => block.locator('.live-responses-table .response .response-col_status').first().textContent())
        .toContain('201');
      const created = (await response.json()) as { merchantId: string };
      expect(problems).toEqual([]);
      await page.close();

      const list = await fetch(`${server.url}/v1/partners/merchant?limit=100`, {
        headers: { authorization: `Bearer ${server.partner.apiKey}` },
      });
      const body = (await list.json()) as { merchants: Array<{ merchantId: string; name: string }> };
      expect(body.merchants).toContainEqual(expect.objectContaining({ merchantId: created.merchantId, name }));
    },
    60_000,
  );
});
