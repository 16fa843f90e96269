// The tag in a real Chromium (issue 52): a single-page app's history navigations are page views
// referred by the page before them, and each page view's visible time is reported as an
// Engagement event dated the page view's time plus that time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { hasChromium, launchChromium, mapToLoopback } from '../helpers/chromium.js';
import { publishCname } from '../helpers/collector.js';
import { generateTag, listEvents } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';

const MERCHANT_DOMAIN = 'spa-shop.com';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Longer than the script's batching delay (500 ms) and a round trip on a loaded machine. */
const QUIET_MS = 2_000;

interface Stored {
  id: string;
  name: string;
  at: number;
  data: Json;
}

describe.skipIf(!hasChromium)('SPA page views and engaged time, in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let site: http.Server;
  let page = '';

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchChromium(mapToLoopback(MERCHANT_DOMAIN));
    site = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(page);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await server?.close();
  });

  /** A verified tag on the merchant's domain, its snippet in every page of the site. */
  async function shop() {
    const key = server.partner.apiKey;
    const tag = await generateTag(server, { domain: MERCHANT_DOMAIN });
    publishCname(server, tag);
    const verified = await api(server, key).post('/v1/partners/tag/verify', {
      tagId: tag.tagId,
      subdomain: `www.${MERCHANT_DOMAIN}`,
    });
    expect(verified.status).toBe(200);
    const snippet = (await api(server, key).get(`/v1/partners/tag/${tag.tagId}/snippet`)).body;
    const collectorHost = `${tag.record.name}.${MERCHANT_DOMAIN}`;
    const html = (snippet.html as string).replace(
      `https://${collectorHost}`,
      `http://${collectorHost}:${new URL(server.url).port}`,
    );
    page = `<!doctype html><html><head><title>Shop</title>\n${html}\n</head><body>Shop</body></html>`;
    const events = async (): Promise<Stored[]> => {
      const list = (await listEvents(server, tag.merchantId, { limit: 100, sortOrder: 'asc' })).body.events as Json[];
      return list.map((e) => ({
        id: e.id,
        name: e.event_name,
        at: Date.parse(e.event_time),
        data: JSON.parse(e.raw_data),
      }));
    };
    return { tag, siteUrl: `http://${MERCHANT_DOMAIN}:${(site.address() as AddressInfo).port}`, events };
  }

  const errorsOf = (tab: Page) => {
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    return errors;
  };
  const named = (list: Stored[], name: string) => list.filter((e) => e.name === name).sort((a, b) => a.at - b.at);

  it('counts every history navigation to another path or query once, referred by the page before it', async () => {
    const { siteUrl, events } = await shop();
    const context = await browser.newContext();
    const tab = await context.newPage();
    const errors = errorsOf(tab);
    await tab.goto(`${siteUrl}/app`);
    // Each step after a pause: every page view is visible for a while and has a time of its own.
    const steps = [
      "history.pushState({}, '', '/app/products')",
      "history.pushState({}, '', '/app/products#reviews')", // the fragment alone: no page view
      "location.hash = 'top'", // the fragment alone (a popstate too): no page view
      "history.replaceState({ s: 1 }, '', '/app/products')", // same path and query: no page view
      "history.replaceState({}, '', '/app/products?utm_source=spa&page=2')", // another query
      "history.pushState({}, '', '/app/cart')",
      'history.back()', // popstate, back to /app/products?utm_source=spa&page=2
    ];
    for (const step of steps) {
      await pause(150);
      await tab.evaluate(step);
    }
    await until('the back navigation', async () =>
      (await tab.evaluate('location.search')) === '?utm_source=spa&page=2' ? true : undefined,
    );
    await until('5 page views and 4 engagements', async () => {
      const list = await events();
      return named(list, 'PageView').length >= 5 && named(list, 'Engagement').length >= 4 ? true : undefined;
    });
    await pause(QUIET_MS);
    const stored = await events();
    const views = named(stored, 'PageView');
    expect(views.map((e) => ({ url: e.data.url, path: e.data.path, referrer: e.data.referrer }))).toEqual([
      { url: `${siteUrl}/app`, path: '/app', referrer: '' },
      { url: `${siteUrl}/app/products`, path: '/app/products', referrer: `${siteUrl}/app` },
      {
        url: `${siteUrl}/app/products?utm_source=spa`,
        path: '/app/products',
        referrer: `${siteUrl}/app/products`,
      },
      { url: `${siteUrl}/app/cart`, path: '/app/cart', referrer: `${siteUrl}/app/products` },
      { url: `${siteUrl}/app/products?utm_source=spa`, path: '/app/products', referrer: `${siteUrl}/app/cart` },
    ]);
    expect(views.every((e) => e.data.title === 'Shop')).toBe(true);
    // Each navigation ended the page before it: its Engagement, dated its page view plus its visible ms.
    const engaged = named(stored, 'Engagement');
    expect(engaged.map((e) => e.data.path)).toEqual(['/app', '/app/products', '/app/products', '/app/cart']);
    engaged.forEach((e, i) => {
      expect(e.data.engaged_ms).toBeGreaterThan(0);
      expect(e.at).toBe(views[i]!.at + e.data.engaged_ms);
      expect(e.at).toBeLessThanOrEqual(views[i + 1]!.at);
    });
    expect(stored).toHaveLength(9);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('reports the visible time of a page view on hiding and on leaving, the hidden time left out', async () => {
    const { tag, siteUrl, events } = await shop();
    const context = await browser.newContext();
    const tab = await context.newPage();
    const errors = errorsOf(tab);
    const stamp = async (script: string) =>
      (await tab.evaluate(`(() => { ${script}; return Date.now(); })()`)) as number;
    // Headless Chromium keeps every page visible: the page is told it is hidden, as a browser would.
    const hide = () =>
      stamp(
        "Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' }); document.dispatchEvent(new Event('visibilitychange'))",
      );
    const show = () => stamp("delete document.visibilityState; document.dispatchEvent(new Event('visibilitychange'))");

    await tab.goto(`${siteUrl}/article`);
    await pause(1_500);
    const hiddenAt = await hide();
    // Hidden again: nothing grew, nothing is sent.
    await tab.evaluate("document.dispatchEvent(new Event('visibilitychange'))");
    await pause(2_000);
    // Hidden, the page lives on: the report left by fetch, whose answer removed its stored copy.
    const storageKey = `localStorage.getItem('ptag:${tag.tagId}')`;
    await until('the hidden report acknowledged', async () =>
      (await tab.evaluate(storageKey)) === null ? true : undefined,
    );
    const shownAt = await show();
    await pause(1_000);
    // Leaves by a navigation of the page itself (a link would do the same): the referrer is set.
    const leftAt = await stamp("setTimeout(() => { location.href = '/next'; })");
    await tab.waitForURL(`${siteUrl}/next`);

    const stored = await until('the page views and both engagements', async () => {
      const list = await events();
      return named(list, 'PageView').length >= 2 && named(list, 'Engagement').length >= 2 ? list : undefined;
    });
    // The report sent on pagehide also stays stored for the next page, which sends it again: once stored.
    await until('the stored copies acknowledged', async () =>
      (await tab.evaluate(storageKey)) === null ? true : undefined,
    );
    await pause(QUIET_MS);
    expect((await events()).length).toBe(stored.length);
    const [view, next] = named(stored, 'PageView');
    expect(next!.data.referrer).toBe(`${siteUrl}/article`);
    const [first, last] = named(stored, 'Engagement');
    expect(stored).toHaveLength(4);
    expect(first!.data).toEqual({ path: '/article', engaged_ms: expect.any(Number) });
    expect(last!.data.path).toBe('/article');
    // Visible from the page view to the hiding: the first report.
    expect(Math.abs(first!.data.engaged_ms - (hiddenAt - view!.at))).toBeLessThanOrEqual(100);
    // Then visible again from the showing to the leaving (the navigation takes a moment): cumulative.
    const again = last!.data.engaged_ms - first!.data.engaged_ms;
    expect(again).toBeGreaterThanOrEqual(leftAt - shownAt);
    expect(again).toBeLessThan(leftAt - shownAt + 1_500);
    // The 2 s hidden are not counted.
    expect(last!.data.engaged_ms).toBeLessThan(leftAt - view!.at - (shownAt - hiddenAt) + 1_500);
    // Dated the page view's time plus the visible time: the visit lasts as long as the page was seen.
    expect(first!.at).toBe(view!.at + first!.data.engaged_ms);
    expect(last!.at).toBe(view!.at + last!.data.engaged_ms);
    console.log(
      `engagement figures: ${JSON.stringify({
        visibleBeforeHidingMs: hiddenAt - view!.at,
        firstEngagedMs: first!.data.engaged_ms,
        hiddenMs: shownAt - hiddenAt,
        visibleAgainToLeavingMs: leftAt - shownAt,
        lastEngagedMs: last!.data.engaged_ms,
      })}`,
    );
    expect(errors).toEqual([]);
    await context.close();
  });
});
