import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { hasChromium, launchChromium } from '../helpers/chromium.js';
import { publishCname } from '../helpers/collector.js';
import { createMerchant, type GeneratedTag, listEvents, uniqueDomain } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';

// Consent in the tag (docs/decisions/consent.md), in a real Chromium: per mode, whether the muid
// cookie is set and which events reach the API, under which consent state.
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Longer than the script's batching delay (500 ms) and a round trip on a loaded machine. */
const QUIET_MS = 2_000;

interface Site {
  tag: GeneratedTag & Json;
  url: string;
  events(): Promise<Json[]>;
}

describe.skipIf(!hasChromium)('consent in the tag, in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let merchantSite: http.Server;
  /** The page of each merchant domain (the Host the browser asks for). */
  const pages = new Map<string, string>();

  beforeAll(async () => {
    server = await startTestServer();
    // Every merchant domain of this file and its collector host resolve to the test servers.
    browser = await launchChromium('--host-resolver-rules=MAP *.com 127.0.0.1');
    merchantSite = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(pages.get((req.headers.host ?? '').replace(/:\d+$/, '')) ?? 'no page');
    });
    await new Promise<void>((resolve) => merchantSite.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => merchantSite?.close(resolve));
    await server?.close();
  });

  /** A merchant with a verified custom tag of these consent settings, and its site's page. */
  async function site(consent: Json, inline = ''): Promise<Site> {
    const key = server.partner.apiKey;
    const merchantId = await createMerchant(server, key);
    const domain = uniqueDomain('consent');
    const generated = await api(server, key).post('/v1/partners/tag/generate', { merchantId, domain, ...consent });
    expect(generated.status).toBe(200);
    const tag = { merchantId, domain, ...generated.body };
    publishCname(server, tag);
    const verified = await api(server, key).post('/v1/partners/tag/verify', { tagId: tag.tagId, subdomain: domain });
    expect(verified.status).toBe(200);
    const snippet = (await api(server, key).get(`/v1/partners/tag/${tag.tagId}/snippet`)).body;
    const collectorHost = snippet.collectorHost as string;
    // Locally the collector speaks plain http on the test server's port instead of https on 443.
    const html = (snippet.html as string).replace(
      `https://${collectorHost}`,
      `http://${collectorHost}:${new URL(server.url).port}`,
    );
    pages.set(domain, `<!doctype html><html><head><title>Shop</title>${html}${inline}</head><body>Shop</body></html>`);
    return {
      tag,
      url: `http://${domain}:${(merchantSite.address() as AddressInfo).port}/`,
      events: async () =>
        (await listEvents(server, merchantId, { limit: 100, sortOrder: 'asc' })).body.events as Json[],
    };
  }

  /** A fresh browser profile (no cookie, no storage), counting what the page sends to `/e`. */
  async function visitor(init?: string): Promise<{ context: BrowserContext; tab: Page; posts: string[] }> {
    const context = await browser.newContext();
    if (init) await context.addInitScript(init);
    const tab = await context.newPage();
    const posts: string[] = [];
    tab.on('request', (request) => {
      if (new URL(request.url()).pathname === '/e') posts.push(request.postData() ?? '');
    });
    return { context, tab, posts };
  }

  const eventsAtLeast = (s: Site, n: number) =>
    until(`${n} stored events`, async () => {
      const list = await s.events();
      return list.length >= n ? list : undefined;
    });
  const cookieNames = async (context: BrowserContext) => (await context.cookies()).map((c) => c.name);

  it('none: the muid cookie at once, events stored as not_required', async () => {
    const s = await site({});
    expect(s.tag).toMatchObject({ consentMode: 'none', respectGpc: true, cookieless: false });
    const { context, tab } = await visitor();
    await tab.goto(s.url);
    const [event] = await eventsAtLeast(s, 1);
    expect(event).toMatchObject({ event_name: 'PageView', consent: 'not_required' });
    await until('the muid cookie', async () => ((await cookieNames(context)).includes('muid') ? true : undefined));
    expect((await context.cookies()).find((c) => c.name === 'muid')?.value).toBe(event.muid);
    await context.close();
  });

  it('opt-in: nothing sent and no cookie before consent; granted sends the held page view with a cookie', async () => {
    const s = await site({ consentMode: 'opt-in', cookieless: false });
    expect(s.tag).toMatchObject({ consentMode: 'opt-in', cookieless: false });
    const { context, tab, posts } = await visitor();
    await tab.goto(s.url);
    await tab.evaluate("ptag('track', 'AddToCart', { sku: 'A-1' })");
    await pause(QUIET_MS);
    expect(posts).toEqual([]);
    expect(await s.events()).toEqual([]);
    expect(await context.cookies()).toEqual([]);

    await tab.evaluate("ptag('consent', 'granted')");
    const stored = await eventsAtLeast(s, 2);
    expect(stored.map((e) => e.event_name).sort()).toEqual(['AddToCart', 'PageView']);
    expect(new Set(stored.map((e) => e.consent))).toEqual(new Set(['granted']));
    await until('the muid cookie', async () => ((await cookieNames(context)).includes('muid') ? true : undefined));

    // The answer is remembered: the next page is collected at once, under the same cookie.
    await tab.reload();
    const after = await eventsAtLeast(s, 3);
    expect(after.every((e) => e.consent === 'granted')).toBe(true);
    expect(new Set(after.map((e) => e.muid)).size).toBe(1);
    await context.close();
  });

  it('opt-in cookieless (its default): page views counted without a cookie, one visitor for two loads', async () => {
    const s = await site({ consentMode: 'opt-in' });
    expect(s.tag).toMatchObject({ consentMode: 'opt-in', cookieless: true });
    const { context, tab, posts } = await visitor();
    await tab.goto(s.url);
    await eventsAtLeast(s, 1);
    await tab.goto(`${s.url}second`);
    // The first page's Engagement (issue 52) comes along, cookieless too.
    const stored = await until('both page views', async () => {
      const views = (await s.events()).filter((e) => e.event_name === 'PageView');
      return views.length >= 2 ? views : undefined;
    });
    expect(stored.map((e) => [e.event_name, e.consent])).toEqual([
      ['PageView', 'cookieless'],
      ['PageView', 'cookieless'],
    ]);
    expect(new Set((await s.events()).map((e) => e.consent))).toEqual(new Set(['cookieless']));
    // One visitor: the same daily hash for both loads, and nothing stored in the browser for it.
    expect(new Set(stored.map((e) => e.muid)).size).toBe(1);
    expect(stored[0]?.muid).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await context.cookies()).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    const summary = await api(server, server.partner.apiKey).get(
      `/v1/partners/stats/summary?merchantId=${s.tag.merchantId}&startDate=${today}&endDate=${today}`,
    );
    expect(summary.status).toBe(200);
    expect(summary.body.totals).toMatchObject({ pageviews: 2, visitors: 1 });
    // A batch the collector does not acknowledge stays in memory only: nothing in the browser's storage.
    await tab.route('**/e', (route) => route.fulfill({ status: 503 }));
    const before = posts.length;
    await tab.evaluate("ptag('track', 'Unanswered')");
    await until('the unanswered batch', async () =>
      posts.slice(before).some((p) => p.includes('Unanswered')) ? true : undefined,
    );
    expect(await tab.evaluate('localStorage.length + sessionStorage.length')).toBe(0);
    await tab.unroute('**/e');

    // Consent granted later: a cookie from then on, its events marked granted.
    await tab.evaluate("ptag('consent', 'granted'); ptag('track', 'SignUp')");
    const granted = await until('the granted event', async () =>
      (await s.events()).find((e) => e.event_name === 'SignUp'),
    );
    expect(granted.consent).toBe('granted');
    expect(granted.muid).not.toBe(stored[0]?.muid);
    await until('the muid cookie', async () => ((await cookieNames(context)).includes('muid') ? true : undefined));
    await context.close();
  });

  it('opt-out: collects with a cookie until denied; denied clears the cookie and stops collection', async () => {
    const s = await site({ consentMode: 'opt-out' });
    expect(s.tag).toMatchObject({ consentMode: 'opt-out', cookieless: false });
    const { context, tab } = await visitor();
    await tab.goto(s.url);
    const [pageView] = await eventsAtLeast(s, 1);
    expect(pageView).toMatchObject({ event_name: 'PageView', consent: 'implied' });
    await until('the muid cookie', async () => ((await cookieNames(context)).includes('muid') ? true : undefined));

    await tab.evaluate("ptag('consent', 'denied'); ptag('track', 'AfterDenial')");
    await until('the cookie cleared', async () => ((await context.cookies()).length === 0 ? true : undefined));
    // The denial is remembered: the next page sends nothing either, and no cookie comes back.
    await tab.reload();
    await tab.evaluate("ptag('track', 'AfterReload')");
    await pause(QUIET_MS);
    expect((await s.events()).map((e) => e.event_name)).toEqual(['PageView']);
    expect(await context.cookies()).toEqual([]);
    await context.close();
  });

  it('GPC counts as denied (opt-out): no cookie, no event; an explicit grant overrides it', async () => {
    const s = await site({ consentMode: 'opt-out' });
    const gpc = "Object.defineProperty(navigator, 'globalPrivacyControl', { value: true })";
    const { context, tab, posts } = await visitor(gpc);
    await tab.goto(s.url);
    await tab.evaluate("ptag('track', 'ViewContent')");
    await pause(QUIET_MS);
    expect(await s.events()).toEqual([]);
    expect(await context.cookies()).toEqual([]);
    // Only the request that clears a cookie from before went out: no event.
    expect(posts.map((body) => JSON.parse(body))).toEqual([{ tagId: s.tag.tagId, consent: 'denied', events: [] }]);

    await tab.evaluate("ptag('consent', 'granted'); ptag('track', 'Login')");
    const [login] = await eventsAtLeast(s, 1);
    expect(login).toMatchObject({ event_name: 'Login', consent: 'granted' });
    await until('the muid cookie', async () => ((await cookieNames(context)).includes('muid') ? true : undefined));
    await context.close();
  });

  it('GPC with a cookieless opt-out tag: page views still counted, no cookie', async () => {
    const s = await site({ consentMode: 'opt-out', cookieless: true });
    const { context, tab } = await visitor("Object.defineProperty(navigator, 'globalPrivacyControl', { value: true })");
    await tab.goto(s.url);
    const [pageView] = await eventsAtLeast(s, 1);
    expect(pageView).toMatchObject({ event_name: 'PageView', consent: 'cookieless' });
    await pause(QUIET_MS);
    expect(await context.cookies()).toEqual([]);
    await context.close();
  });

  it('respectGpc false: GPC is ignored, opt-out collects with a cookie', async () => {
    const s = await site({ consentMode: 'opt-out', respectGpc: false });
    const { context, tab } = await visitor("Object.defineProperty(navigator, 'globalPrivacyControl', { value: true })");
    await tab.goto(s.url);
    const [pageView] = await eventsAtLeast(s, 1);
    expect(pageView).toMatchObject({ event_name: 'PageView', consent: 'implied' });
    await until('the muid cookie', async () => ((await cookieNames(context)).includes('muid') ? true : undefined));
    await context.close();
  });
});
