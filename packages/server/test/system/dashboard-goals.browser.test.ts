// <partner-tags-dashboard>'s goals card, funnel view and CSV downloads (issue 53) in a real
// Chromium, on examples/merchant-admin's page (its own origin and strict CSP) against a real
// server. Goals are created and journeys sent through POST /v1/collect; the goals card and the
// funnel (its bars and its table) equal the API's answers for the element's range, unfiltered and
// filtered; each "Download CSV" saves the API's CSV of the same read (the goals': made in the page
// with the server's quoting and formula defusing); a wrong funnel attribute is said in its card
// while the rest shows; axe-core finds nothing serious, in light and in dark, with the funnel's
// table open; the page logs no error (a CSP violation would be one).
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient, type StatsFilter, type StatsFunnel, type StatsGoalTotals } from '../../../sdk/src/index.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { DESKTOP_CHROME_UA, hasChromium, launchChromium } from '../helpers/chromium.js';
import { rawRequest } from '../helpers/collector.js';
import {
  type Admin,
  buildElementBundle,
  DASHBOARD,
  startAdmin,
  tableRows,
  waitReady,
} from '../helpers/merchant-admin.js';
import { until } from '../helpers/until.js';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const MOBILE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1';

/** A goal of the test: its name (the last one needs quoting and defusing in a CSV) and what converts. */
const GOALS = {
  view: { name: 'Viewed a product', pathPattern: '/products/*' },
  cart: { name: 'Added to cart', eventName: 'AddToCart' },
  buy: { name: 'Bought', eventName: 'Purchase' },
  newsletter: { name: '=Newsletter, "weekly"', eventName: 'SignUp' },
} as const;

/** A page view (a path) or an event (a name); each a minute after the one before. */
type Hit = `/${string}` | 'AddToCart' | 'Purchase' | 'SignUp';

/** Journeys within the last 30 days: the funnel view → cart → buy is reached by 6, 3 and 2 visitors. */
const JOURNEYS: { daysAgo: number; mobile?: boolean; hits: Hit[] }[] = [
  { daysAgo: 1, hits: ['/', '/products/a', 'AddToCart', '/checkout', 'Purchase'] },
  { daysAgo: 2, mobile: true, hits: ['/products/b', 'AddToCart'] },
  { daysAgo: 2, hits: ['/products/a'] },
  { daysAgo: 3, mobile: true, hits: ['/products/c', '/products/d'] },
  // Out of order: the cart before the product; reaches the first step only.
  { daysAgo: 4, hits: ['AddToCart', '/products/a'] },
  { daysAgo: 4, hits: ['/'] },
  { daysAgo: 5, mobile: true, hits: ['SignUp', '/products/a', 'AddToCart', 'Purchase'] },
];

const counts = new Intl.NumberFormat('en-US');
const share = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });

describe.skipIf(!hasChromium)('<partner-tags-dashboard>: goals, funnel and CSV in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let admin: Admin;
  let work: string;
  let sdk: PartnerClient;
  let merchantId: string;
  const ids = {} as Record<keyof typeof GOALS, string>;
  let funnelIds: string[];

  const since = () => new Date(Date.now() - 40 * 86_400_000).toISOString().slice(0, 10);
  const today = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'dashboard-goals-'));
    buildElementBundle();
    server = await startTestServer();
    sdk = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url.replace(/\/$/, ''), maxRetries: 0 });
    ({ merchantId } = await sdk.merchants.create({ name: 'Fjord Outfitters' }));
    const shopHost = `shop.${server.partner.domain}`;
    const { tagId } = await sdk.tags.generate({ merchantId, domain: shopHost });
    for (const [key, goal] of Object.entries(GOALS)) {
      ids[key as keyof typeof GOALS] = (await sdk.merchants.goals.create({ merchantId, ...goal })).goalId;
    }
    funnelIds = [ids.view, ids.cart, ids.buy];
    let sent = 0;
    for (const [n, journey] of JOURNEYS.entries()) {
      const start = Date.now() - journey.daysAgo * 86_400_000;
      const events = journey.hits.map((hit, i) => {
        const event_time = new Date(start + i * 60_000).toISOString();
        return hit.startsWith('/')
          ? { event_name: 'PageView', muid: `v${n}`, event_time, data: { path: hit, url: `https://${shopHost}${hit}` } }
          : {
              event_name: hit,
              muid: `v${n}`,
              event_time,
              data: hit === 'Purchase' ? { value: '20.00', currency: 'EUR' } : {},
            };
      });
      const res = await rawRequest(server.url, {
        method: 'POST',
        path: '/v1/collect',
        headers: { 'content-type': 'application/json', 'user-agent': journey.mobile ? MOBILE_UA : DESKTOP_CHROME_UA },
        body: JSON.stringify({ tagId, events }),
      });
      expect(res.status, res.text).toBe(202);
      sent += events.length;
    }
    await until(
      'the statistics to count every event sent',
      async () => {
        const { totals } = await sdk.stats.summary({ merchantId, startDate: since(), endDate: today() });
        return totals.events === sent ? true : undefined;
      },
      30_000,
    );
    admin = await startAdmin(server, work, { MERCHANT_ID: merchantId });
    browser = await launchChromium();
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    admin?.child.kill('SIGTERM');
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** A page of the example (its CSP enforced), failing the test on any page or console error. */
  async function open(colorScheme: 'light' | 'dark' = 'light') {
    const context = await browser.newContext({
      viewport: { width: 1200, height: 900 },
      colorScheme,
      acceptDownloads: true,
    });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(admin.url);
    await waitReady(page);
    return { context, page, errors };
  }

  /** Sets the element's attributes and waits for the load they cause. */
  async function configure(page: Page, attributes: Record<string, string | null>): Promise<void> {
    // A string: the server's test types have no DOM.
    await page.evaluate(`new Promise((resolve) => {
      const element = document.querySelector('${DASHBOARD}');
      element.addEventListener('ptd-load', () => resolve(), { once: true });
      for (const [name, value] of Object.entries(${JSON.stringify(attributes)})) {
        if (value === null) element.removeAttribute(name);
        else element.setAttribute(name, value);
      }
    })`);
    await waitReady(page);
  }

  async function shownParams(page: Page, filters: StatsFilter[]) {
    const range = await page.evaluate<{ startDate: string; endDate: string; timezone: string }>(
      `document.querySelector('${DASHBOARD}').range`,
    );
    return { merchantId, ...range, filters };
  }

  /** The goals card and the funnel (bars, note and table) against the API's answers. */
  async function expectApiAnswers(
    page: Page,
    filters: StatsFilter[],
    window?: string,
  ): Promise<{ goals: StatsGoalTotals[]; funnel: StatsFunnel }> {
    const params = await shownParams(page, filters);
    const { totals } = await sdk.stats.summary(params);
    const funnel = await sdk.stats.funnel({ ...params, steps: funnelIds, window });
    const what = JSON.stringify(filters);
    expect(totals.goals.map((g) => g.goalId)).toEqual(Object.values(ids));
    expect(await tableRows(page, 'Goals'), `goals ${what}`).toEqual(
      totals.goals.map((g) => [g.name, counts.format(g.conversions), share.format(g.conversionRate)]),
    );
    expect(await tableRows(page, 'Funnel steps'), `funnel ${what}`).toEqual(
      funnel.steps.map((s, i) => [
        `${i + 1}. ${s.name}`,
        counts.format(s.visitors),
        share.format(s.conversionRate),
        i === 0 ? '–' : share.format(s.dropOff),
      ]),
    );
    // The bars: each step's visitors against the first's, the drop-off between them, drawn (the
    // widths are CSSOM properties, which the page's CSP allows).
    const bars = await page.evaluate<{ text: string[]; widths: string[]; drawn: number[] }>(`(() => {
      const root = document.querySelector('${DASHBOARD}').shadowRoot;
      const bars = [...root.querySelectorAll('.funnel .bar')];
      return {
        text: [...root.querySelectorAll('.funnel li')].map((li) => li.textContent),
        widths: bars.map((bar) => bar.style.width),
        drawn: bars.map((bar) => bar.getBoundingClientRect().width / bar.parentElement.getBoundingClientRect().width),
      };
    })()`);
    const first = funnel.steps[0]?.visitors ?? 0;
    expect(bars.text, `funnel bars ${what}`).toEqual(
      funnel.steps.flatMap((s, i) => [
        ...(i === 0 ? [] : [`↓ ${share.format(s.dropOff)} dropped off`]),
        `${i + 1}. ${s.name}${counts.format(s.visitors)} visitors · ${share.format(s.conversionRate)}`,
      ]),
    );
    expect(bars.widths.map((w) => Number.parseFloat(w))).toEqual(
      funnel.steps.map((s) => expect.closeTo(first === 0 ? 0 : (s.visitors / first) * 100, 3)),
    );
    for (const [i, s] of funnel.steps.entries()) {
      expect(bars.drawn[i]).toBeCloseTo(first === 0 ? 0 : s.visitors / first, 1);
    }
    return { goals: totals.goals, funnel };
  }

  /** Clicks a card's "Download CSV" and answers the saved file's name and text. */
  async function download(page: Page, of: string): Promise<{ name: string; text: string }> {
    const button = page.locator(DASHBOARD).getByRole('button', { name: `Download CSV of ${of}`, exact: true });
    const [file] = await Promise.all([page.waitForEvent('download'), button.click()]);
    const saved = await file.path();
    return { name: file.suggestedFilename(), text: readFileSync(saved, 'utf8') };
  }

  /** The API's CSV answer of a read, as the SDK gets it with Accept: text/csv. */
  const apiCsv = async (call: (options: { headers: Record<string, string> }) => { asResponse(): Promise<Response> }) =>
    (await call({ headers: { accept: 'text/csv' } }).asResponse()).text();

  it('shows the goals and the funnel as the API answers them, unfiltered and filtered', async () => {
    const { context, page, errors } = await open();
    const dashboard = page.locator(DASHBOARD);
    // Goals exist: the goals card shows; no funnel attribute, no funnel.
    expect(await page.getByRole('table', { name: 'Goals', exact: true }).isVisible()).toBe(true);
    expect(await dashboard.getByRole('heading', { name: 'Funnel' }).count()).toBe(0);

    await configure(page, { funnel: funnelIds.join(', ') });
    const all = await expectApiAnswers(page, []);
    // Numbers worth comparing: known by construction.
    expect(all.funnel.steps.map((s) => s.visitors)).toEqual([6, 3, 2]);
    expect(all.goals.map((g) => g.conversions)).toEqual([7, 4, 2, 1]);
    expect(await dashboard.getByText('within 1 day', { exact: false }).isVisible()).toBe(true);

    // The funnel's table: in the accessibility tree always, on screen with "Show as table".
    const funnelTable = page.getByRole('table', { name: 'Funnel steps', exact: true });
    // Visually hidden: in a 1-pixel clipped box.
    const onScreen = async () => ((await dashboard.locator('#ptd-funnel').boundingBox())?.width ?? 0) > 100;
    expect(await onScreen()).toBe(false);
    const toggle = dashboard.locator('[data-card="funnel"] [data-toggle]');
    expect(await toggle.textContent()).toBe('Show as table');
    await toggle.click();
    expect(await onScreen()).toBe(true);
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await toggle.textContent()).toBe('Hide table');

    // A filter and a window reach the goals and the funnel.
    await configure(page, { filters: 'device==mobile', 'funnel-window': 'PT1H' });
    const mobile = await expectApiAnswers(page, [{ dimension: 'device', values: ['mobile'] }], 'PT1H');
    expect(mobile.funnel.steps.map((s) => s.visitors)).toEqual([3, 2, 1]);
    expect(mobile.funnel.window).toBe('PT1H');
    expect(await dashboard.getByText('within 1 hour', { exact: false }).isVisible()).toBe(true);
    // The table stays open across loads.
    expect(await onScreen()).toBe(true);

    // A funnel attribute naming another merchant's goal (or too few): said in its card; the rest shows.
    await configure(page, { filters: null, 'funnel-window': null, funnel: `${ids.view},${crypto.randomUUID()}` });
    const note = dashboard.locator('[data-card="funnel"] .note');
    expect(await note.textContent()).toMatch(/^The funnel cannot be shown: check the goal ids/);
    expect(await funnelTable.count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Goals', exact: true }).isVisible()).toBe(true);
    await configure(page, { funnel: ids.view });
    expect(await note.textContent()).toMatch(/^The funnel cannot be shown/);
    // Network errors of the wrong funnel are the console's only entries.
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await context.close();
  }, 90_000);

  it('downloads the CSV of what each card shows, under the page’s CSP', async () => {
    const { context, page, errors } = await open();
    await configure(page, { funnel: funnelIds.join(','), filters: 'device==desktop' });
    const filters: StatsFilter[] = [{ dimension: 'device', values: ['desktop'] }];
    const params = await shownParams(page, filters);
    const dates = `${params.startDate}-to-${params.endDate}`;
    const { goals } = await expectApiAnswers(page, filters);

    // The goals, made in the page: the server's columns, RFC 4180 quoting, a formula defused.
    const goalsFile = await download(page, 'the goals');
    expect(goalsFile.name).toBe(`goals-${dates}.csv`);
    expect(goalsFile.text).toBe(
      [
        'goal_id,name,conversions,visitors,conversion_rate',
        ...goals.map(
          (g) =>
            `${g.goalId},${g.name === GOALS.newsletter.name ? `"'=Newsletter, ""weekly"""` : g.name},${g.conversions},${g.visitors},${g.conversionRate}`,
        ),
        '',
      ].join('\r\n'),
    );

    // The others: the API's own CSV of the same read.
    const funnelFile = await download(page, 'the funnel');
    expect(funnelFile.name).toBe(`funnel-${dates}.csv`);
    expect(funnelFile.text).toBe(await apiCsv((o) => sdk.stats.funnel({ ...params, steps: funnelIds }, o)));
    expect(funnelFile.text.split('\r\n')[0]).toBe('step,goal_id,name,visitors,conversion_rate,drop_off');

    const dailyFile = await download(page, 'the daily numbers');
    expect(dailyFile.name).toBe(`daily-${dates}.csv`);
    expect(dailyFile.text).toBe(await apiCsv((o) => sdk.stats.timeseries({ ...params, interval: 'day' }, o)));
    expect(dailyFile.text.split('\r\n').length).toBe(30 + 2);

    const pagesFile = await download(page, 'Top pages');
    expect(pagesFile.name).toBe(`path-${dates}.csv`);
    expect(pagesFile.text).toBe(
      await apiCsv((o) => sdk.stats.breakdown({ ...params, dimension: 'path', limit: 10 }, o)),
    );
    expect(pagesFile.text).toContain('/products/a,');
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('passes axe-core with the goals and the funnel’s table shown, in light and in dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page, errors } = await open(scheme);
      await configure(page, { funnel: funnelIds.join(',') });
      await expectApiAnswers(page, []);
      await page.locator(`${DASHBOARD} [data-card="funnel"]`).getByRole('button', { name: 'Show as table' }).click();
      // axe-core through the DevTools protocol (the page's CSP allows no injected script tag).
      await page.evaluate(AXE);
      const violations = await page.evaluate<{ id: string; impact: string; targets: string[] }[]>(`
        axe.run(document, { resultTypes: ['violations'] }).then((result) =>
          result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)) })),
        )`);
      expect(
        violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
        scheme,
      ).toEqual([]);
      expect(errors, scheme).toEqual([]);
      await context.close();
    }
  }, 90_000);
});
