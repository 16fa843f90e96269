// <partner-tags-dashboard>'s visits, places, devices, filters and visitors now (issue 52) in a real
// Chromium, on examples/merchant-admin's page (its own origin and strict CSP) against a real server
// with TRUST_PROXY=loopback. Visitors are sent through POST /v1/collect with known user agents and
// CF-IPCountry headers; every card and table the element shows equals the API's answer for the same
// range, unfiltered, after a click on a row (the filter reaches every call), with two filters, and
// after each is removed again (by keyboard and by mouse); visitors now follows the realtime
// endpoint while the element is on screen and stops when it is hidden or gone; the day not over
// is marked "so far"; axe-core finds nothing serious with filters on, in light and in dark.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient, type StatsBreakdown, type StatsFilter, type StatsTotals } from '../../../sdk/src/index.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { DESKTOP_CHROME_UA, hasChromium, launchChromium } from '../helpers/chromium.js';
import { rawRequest } from '../helpers/collector.js';
import {
  type Admin,
  amount,
  buildElementBundle,
  count,
  DASHBOARD,
  expectedChange,
  kpi,
  ROOT,
  startAdmin,
  tableRows,
  waitReady,
} from '../helpers/merchant-admin.js';
import { until } from '../helpers/until.js';

const ARTIFACTS = path.join(ROOT, '.ci/artifacts');
const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

const UA = {
  chromeLinux: DESKTOP_CHROME_UA,
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0',
  safariIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1',
  chromeAndroid:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36',
  safariIpad:
    'Mozilla/5.0 (iPad; CPU OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
};

interface Visit {
  ua: string;
  /** CF-IPCountry; none: the address's (loopback: none). */
  country?: string;
  /** When the visit began: days before now, or minutes before now. */
  ago: { days: number } | { minutes: number };
  pages: string[];
  referrer?: string;
  /** utm_source, with utm_medium=email. */
  newsletter?: boolean;
  purchase?: { value: string; currency: string };
}

/** Visits in this period (the last 30 days, today's a few minutes ago) and in the one before. */
const VISITS: Visit[] = [
  {
    ua: UA.chromeLinux,
    country: 'DE',
    ago: { days: 2 },
    pages: ['/', '/shoes', '/checkout'],
    referrer: 'https://www.google.com/search?q=trail+shoes',
    purchase: { value: '89.00', currency: 'EUR' },
  },
  { ua: UA.firefoxWindows, country: 'FR', ago: { days: 1 }, pages: ['/'] },
  { ua: UA.safariIphone, country: 'DE', ago: { minutes: 3 }, pages: ['/shoes', '/shoes/trail'], newsletter: true },
  {
    ua: UA.chromeAndroid,
    country: 'US',
    ago: { days: 5 },
    pages: ['/sale', '/bags'],
    referrer: 'https://www.instagram.com/',
    purchase: { value: '59.00', currency: 'USD' },
  },
  { ua: UA.firefoxWindows, ago: { days: 10 }, pages: ['/about'], referrer: 'https://duckduckgo.com/' },
  { ua: UA.chromeLinux, country: 'DE', ago: { days: 3 }, pages: ['/shoes'], newsletter: true },
  { ua: UA.safariIphone, country: 'DE', ago: { days: 4 }, pages: ['/', '/sale'], newsletter: true },
  { ua: UA.chromeAndroid, country: 'DE', ago: { minutes: 2 }, pages: ['/'] },
  { ua: UA.safariIpad, country: 'GB', ago: { days: 35 }, pages: ['/', '/bags'] },
  { ua: UA.safariIphone, country: 'FR', ago: { days: 40 }, pages: ['/'], newsletter: true },
  { ua: UA.chromeLinux, country: 'DE', ago: { days: 45 }, pages: ['/shoes', '/checkout'] },
  // Dropped by the collector (counted as bot events).
  { ua: UA.googlebot, country: 'US', ago: { minutes: 1 }, pages: ['/', '/shoes'] },
];

const TOPS = [
  { dimension: 'path', caption: 'Top pages', count: 'events' },
  { dimension: 'entry_page', caption: 'Entry pages', count: 'visits' },
  { dimension: 'channel', caption: 'Channels', count: 'visits' },
  { dimension: 'referrer', caption: 'Top referrers', count: 'events' },
  { dimension: 'utm_source', caption: 'Top sources (utm_source)', count: 'events' },
  { dimension: 'country', caption: 'Countries', count: 'visits' },
  { dimension: 'device', caption: 'Devices', count: 'visits' },
  { dimension: 'browser', caption: 'Browsers', count: 'visits' },
] as const;

const regions = new Intl.DisplayNames(['en'], { type: 'region' });
const shownValue = (dimension: string, value: string) =>
  dimension === 'country' && /^[A-Z]{2}$/.test(value) ? (regions.of(value) ?? value) : value;
const share = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });
const duration = (seconds: number) => {
  const s = Math.round(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${two(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${two(Math.floor(s / 60) % 60)}m`;
};
const pointsChange = (current: number, previous: number, visits: number, visitsBefore: number) => {
  if (visitsBefore === 0) return visits > 0 ? 'new this period' : 'no change';
  const diff = Math.round((current - previous) * 1000) / 10;
  return diff === 0 ? 'no change' : `${diff > 0 ? '+' : '-'}${Math.abs(diff).toFixed(1)} points`;
};

describe.skipIf(!hasChromium)('<partner-tags-dashboard>: visits, filters and visitors now in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let admin: Admin;
  let work: string;
  let sdk: PartnerClient;
  let merchantId: string;
  let tagId: string;
  let shopHost: string;
  let visitorCount = 0;

  /** One visitor's visit through POST /v1/collect, with its user agent and country headers. */
  async function send(visit: Visit): Promise<number> {
    const muid = `visitor-${++visitorCount}`;
    const start = Date.now() - ('days' in visit.ago ? visit.ago.days * 86_400_000 : visit.ago.minutes * 60_000);
    const events = visit.pages.map((page, i) => {
      const query = i === 0 && visit.newsletter ? '?utm_source=newsletter&utm_medium=email' : '';
      const data: Record<string, string> = { path: page, url: `https://${shopHost}${page}${query}` };
      if (i === 0 && visit.referrer) data.referrer = visit.referrer;
      return { event_name: 'PageView', muid, event_time: new Date(start + i * 40_000).toISOString(), data };
    });
    if (visit.purchase) {
      const time = new Date(start + visit.pages.length * 40_000).toISOString();
      events.push({ event_name: 'Purchase', muid, event_time: time, data: visit.purchase });
    }
    const res = await rawRequest(server.url, {
      method: 'POST',
      path: '/v1/collect',
      headers: {
        'content-type': 'application/json',
        'user-agent': visit.ua,
        ...(visit.country ? { 'cf-ipcountry': visit.country } : {}),
      },
      body: JSON.stringify({ tagId, events }),
    });
    expect(res.status, res.text).toBe(202);
    return visit.ua === UA.googlebot ? 0 : events.length;
  }

  const since = () => new Date(Date.now() - 59 * 86_400_000).toISOString().slice(0, 10);
  const today = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'dashboard-visits-'));
    buildElementBundle();
    server = await startTestServer({ env: { TRUST_PROXY: 'loopback' } });
    sdk = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url.replace(/\/$/, ''), maxRetries: 0 });
    ({ merchantId } = await sdk.merchants.create({ name: 'Fjord Outfitters' }));
    shopHost = `shop.${server.partner.domain}`;
    const tag = await sdk.tags.generate({ merchantId, domain: shopHost });
    tagId = tag.tagId;
    let sent = 0;
    for (const visit of VISITS) sent += await send(visit);
    await until(
      'the statistics to count every event sent',
      async () => {
        const { totals } = await sdk.stats.summary({ merchantId, startDate: since(), endDate: today() });
        return totals.events === sent && totals.botEvents > 0 ? true : undefined;
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
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, colorScheme });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const realtime: number[] = [];
    page.on('request', (req) => {
      if (req.url().includes('/v1/partners/stats/realtime')) realtime.push(Date.now());
    });
    await page.goto(admin.url);
    await waitReady(page);
    return { context, page, errors, realtime };
  }

  /** Resolves with the next `ptd-load` of the element (start it before what causes the load). */
  const nextLoad = (page: Page) =>
    page.evaluate<unknown>(
      `new Promise((resolve) => document.querySelector('${DASHBOARD}').addEventListener('ptd-load', (e) => resolve(e.detail.filters), { once: true }))`,
    );

  /** Every card and table of the element against the API's answers for its range and `filters`. */
  async function expectApiNumbers(page: Page, filters: StatsFilter[]): Promise<StatsTotals> {
    const range = await page.evaluate<{ startDate: string; endDate: string; timezone: string }>(
      `document.querySelector('${DASHBOARD}').range`,
    );
    expect(
      await page.evaluate<unknown>(`document.querySelector('${DASHBOARD}').getAttribute('filters')`),
      'the filters attribute',
    ).toBe(filters.length ? filters.map((f) => `${f.dimension}==${[f.values].flat().join('|')}`).join(';') : null);
    const params = { merchantId, ...range, filters };
    // One after another: the API answers a key's third stats read in flight with 429.
    const summary = await sdk.stats.summary({ ...params, compare: 'previous' });
    const daily = await sdk.stats.timeseries({ ...params, interval: 'day' });
    const tops: StatsBreakdown[] = [];
    for (const { dimension } of TOPS) tops.push(await sdk.stats.breakdown({ ...params, dimension, limit: 10 }));

    const { totals } = summary;
    const previous = summary.previous?.totals;
    if (!previous) throw new Error('the API answered no previous period');
    const what = JSON.stringify(filters);
    for (const metric of ['visitors', 'visits', 'pageviews', 'purchases'] as const) {
      const shown = await kpi(page, metric);
      expect(count(shown.value), `${metric} ${what}`).toBe(totals[metric]);
      expect(shown.change, `${metric} ${what}`).toBe(expectedChange(totals[metric], previous[metric]));
    }
    const bounce = await kpi(page, 'bounceRate');
    expect(bounce.value, `bounce rate ${what}`).toBe(share.format(totals.bounceRate));
    expect(bounce.change, `bounce rate ${what}`).toBe(
      pointsChange(totals.bounceRate, previous.bounceRate, totals.visits, previous.visits),
    );
    const length = await kpi(page, 'visitDuration');
    expect(length.value, `visit duration ${what}`).toBe(duration(totals.visitDuration));
    expect(length.change, `visit duration ${what}`).toBe(expectedChange(totals.visitDuration, previous.visitDuration));
    for (const { currency, amount: sum } of totals.revenue) {
      const shown = await kpi(page, `revenue-${currency}`);
      expect(amount(shown.value), `${currency} ${what}`).toBe(Number(sum));
    }

    // The day not over (the range's last, today) says so; the others are as the API has them.
    const days = await tableRows(page, 'Daily numbers');
    expect(
      days.map(([day, ...cells]) => [day, ...cells.map(count)]),
      `daily ${what}`,
    ).toEqual(
      daily.points.map((p, i) => [
        `${p.start.slice(0, 10)}${i === daily.points.length - 1 ? ' (so far)' : ''}`,
        p.visitors,
        p.pageviews,
        p.purchases,
        p.events,
      ]),
    );

    for (const [i, { dimension, caption, count: second }] of TOPS.entries()) {
      const answer = tops[i] as StatsBreakdown;
      const rows = [...answer.rows, ...(answer.other ? [answer.other] : [])];
      const shown = await tableRows(page, caption);
      expect(
        shown.map(([value, visitors, other]) => [value, count(visitors ?? ''), count(other ?? '')]),
        `${caption} ${what}`,
      ).toEqual(rows.map((r) => [shownValue(dimension, r.value), r.visitors, r[second]]));
    }
    return totals;
  }

  /** The element's focused element inside its shadow root: its accessible label or text. */
  const focused = (page: Page) =>
    page.evaluate<string | null>(`(() => {
      const active = document.querySelector('${DASHBOARD}').shadowRoot.activeElement;
      return active && (active.getAttribute('aria-label') ?? active.textContent);
    })()`);

  it('shows visits, bounce rate, duration, channels, places and devices as the API; a row filters everything, a chip removes it', async () => {
    const { context, page, errors } = await open();
    const all = await expectApiNumbers(page, []);
    // Numbers worth comparing: some visits bounced, others lasted, some came before.
    expect(all.bounceRate).toBeGreaterThan(0);
    expect(all.bounceRate).toBeLessThan(1);
    expect(all.visitDuration).toBeGreaterThan(0);
    expect(all.visits).toBeGreaterThan(5);
    // What the headers sent: countries by name, devices and browsers from the user agents.
    const countries = (await tableRows(page, 'Countries')).map(([name]) => name);
    expect(countries).toEqual(expect.arrayContaining(['Germany', 'France', 'United States', '(none)']));
    expect((await tableRows(page, 'Devices')).map(([name]) => name).sort()).toEqual(['desktop', 'mobile']);
    expect((await tableRows(page, 'Channels')).map(([name]) => name)).toContain('Email');
    // Today is not over: the legend says what the dashed part of the chart is.
    expect(await page.locator(DASHBOARD).getByText('Today, not over yet').isVisible()).toBe(true);

    // A click anywhere on Germany's row: every call of the next load has the filter.
    const dashboard = page.locator(DASHBOARD);
    const countryTable = page.getByRole('table', { name: 'Countries', exact: true });
    let loaded = nextLoad(page);
    await countryTable.locator('tbody tr', { hasText: 'Germany' }).locator('td').first().click();
    expect(await loaded).toEqual([{ dimension: 'country', values: ['DE'], not: false }]);
    await waitReady(page);
    const germany = dashboard.getByRole('button', { name: 'Remove filter: Country is Germany' });
    expect(await germany.isVisible()).toBe(true);
    expect(await focused(page)).toBe('Remove filter: Country is Germany');
    const germans = await expectApiNumbers(page, [{ dimension: 'country', values: ['DE'] }]);
    expect(germans.visits).toBeGreaterThan(0);
    expect(germans.visits).toBeLessThan(all.visits);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-visits-filtered.png'), fullPage: true });
    // Filtered to one country, its table offers nothing more to pick.
    expect(await countryTable.getByRole('button').count()).toBe(0);

    // A second filter, by keyboard: both hold.
    loaded = nextLoad(page);
    await page.getByRole('table', { name: 'Channels', exact: true }).getByRole('button', { name: 'Email' }).focus();
    await page.keyboard.press('Enter');
    await loaded;
    await waitReady(page);
    await expectApiNumbers(page, [
      { dimension: 'country', values: ['DE'] },
      { dimension: 'channel', values: ['Email'] },
    ]);
    expect(await dashboard.getByRole('group', { name: 'Filters' }).textContent()).toContain(
      'Country is Germany×Channel is Email×Clear filters',
    );

    // Removed by keyboard: focus goes to the filter left.
    loaded = nextLoad(page);
    await germany.focus();
    await page.keyboard.press('Enter');
    await loaded;
    await waitReady(page);
    expect(await focused(page)).toBe('Remove filter: Channel is Email');
    await expectApiNumbers(page, [{ dimension: 'channel', values: ['Email'] }]);

    // The last one by mouse: everything as before, the bar gone, focus on the heading.
    loaded = nextLoad(page);
    await dashboard.getByRole('button', { name: 'Remove filter: Channel is Email' }).click();
    await loaded;
    await waitReady(page);
    expect(await dashboard.getByRole('group', { name: 'Filters' }).isHidden()).toBe(true);
    expect(await focused(page)).toBe('Statistics');
    expect(await expectApiNumbers(page, [])).toEqual(all);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it('shows visitors now, refreshed while on screen, not while hidden or removed', async () => {
    const { context, page, errors, realtime } = await open();
    const now = page.locator(`${DASHBOARD} [data-metric="now"]`);
    const shownNow = async () => count(((await now.locator('.now-value').textContent()) ?? '').trim());
    const apiNow = async () => (await sdk.stats.realtime({ merchantId })).visitors;
    // Shown on load (the default interval is 30 s), as the API counts.
    await expect.poll(() => now.isVisible()).toBe(true);
    expect(await now.textContent()).toMatch(/^\d+ visitors? now \(last 5 minutes, whole site\)$/);

    // Every 5 s: two visitors arriving now show up.
    await page.evaluate(`document.querySelector('${DASHBOARD}').setAttribute('realtime-interval', '5')`);
    const before = await apiNow();
    await send({ ua: UA.safariIpad, country: 'GB', ago: { minutes: 0 }, pages: ['/bags'] });
    await send({ ua: UA.chromeLinux, country: 'DE', ago: { minutes: 0 }, pages: ['/', '/shoes'] });
    await until('the realtime answer to count the new visitors', async () =>
      (await apiNow()) >= before + 2 ? true : undefined,
    );
    await expect
      .poll(async () => (await shownNow()) === (await apiNow()) && (await shownNow()) >= 2, { timeout: 15_000 })
      .toBe(true);

    // Hidden: no request; shown again: one at once (the last is older than the interval).
    await page.evaluate(`document.querySelector('${DASHBOARD}').hidden = true`);
    await page.waitForTimeout(300);
    const whileHidden = realtime.length;
    await page.waitForTimeout(6_500);
    expect(realtime.length).toBe(whileHidden);
    await page.evaluate(`document.querySelector('${DASHBOARD}').hidden = false`);
    await expect.poll(() => realtime.length, { timeout: 3_000 }).toBeGreaterThan(whileHidden);

    // Removed from the page: nothing more.
    await page.evaluate(`document.querySelector('${DASHBOARD}').remove()`);
    await page.waitForTimeout(300);
    const removed = realtime.length;
    await page.waitForTimeout(6_000);
    expect(realtime.length).toBe(removed);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('passes axe-core with filters on, in light and in dark, under the page’s CSP', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page, errors } = await open(scheme);
      const loaded = nextLoad(page);
      await page.evaluate(
        `document.querySelector('${DASHBOARD}').setAttribute('filters', 'country==DE;device==mobile')`,
      );
      await loaded;
      await waitReady(page);
      await expectApiNumbers(page, [
        { dimension: 'country', values: ['DE'] },
        { dimension: 'device', values: ['mobile'] },
      ]);
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
