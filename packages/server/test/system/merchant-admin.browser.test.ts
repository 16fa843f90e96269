// examples/merchant-admin in a real Chromium: the partner's page, served by the example's backend
// (a separate process, run as its README says) on another origin than the API, under its own CSP,
// embeds <partner-tags-dashboard> (the standalone bundle of @partner/elements, built here from
// source). The element shows the numbers the statistics API answers (read back from its tables
// and summary, compared with the SDK's answers); it keeps working once its sessions expire, both
// renewed ahead of expiry and after a 401, and the backend is asked again each time; axe-core finds
// no serious or critical violation in light and in dark. Screenshots go to .ci/artifacts/ (and to
// docs/screenshots/, the ones the elements README shows, with UPDATE_SCREENSHOTS=1).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient, type StatsBreakdown } from '../../../sdk/src/index.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { hasChromium, launchChromium } from '../helpers/chromium.js';
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

const ARTIFACTS = path.join(ROOT, '.ci/artifacts');
const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
/** Each session the backend creates lives this long (renewed 1.5 s before its end): the test outlives several. */
const SESSION_SECONDS = 6;

describe.skipIf(!hasChromium)('examples/merchant-admin: <partner-tags-dashboard> in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let admin: Admin;
  let work: string;
  let sdk: PartnerClient;
  let merchantId: string;
  const sessionsCreated = () => admin.output().match(/^session for merchant /gm)?.length ?? 0;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'merchant-admin-'));
    buildElementBundle();
    server = await startTestServer();
    sdk = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url.replace(/\/$/, ''), maxRetries: 0 });
    admin = await startAdmin(server, work, { ADMIN_SESSION_SECONDS: String(SESSION_SECONDS) });
    merchantId = /^merchant admin of merchant (\S+):/m.exec(admin.output())?.[1] as string;
    browser = await launchChromium();
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    admin?.child.kill('SIGTERM');
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** A page of the example (CSP enforced), failing the test on any page error or console error. */
  async function open(colorScheme: 'light' | 'dark' = 'light') {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, colorScheme });
    // Every wait of the page has a deadline well inside the test's.
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const statuses: number[] = [];
    page.on('response', (res) => {
      if (res.url().startsWith(server.url)) statuses.push(res.status());
    });
    await page.goto(admin.url);
    await waitReady(page);
    return { context, page, errors, statuses };
  }

  const shownRange = (page: Page) =>
    page.evaluate<{ startDate: string; endDate: string; timezone: string }>(
      `document.querySelector('${DASHBOARD}').range`,
    );

  /** The element shows the API's answers for its current range: summary, daily table, top lists. */
  async function expectApiNumbers(page: Page): Promise<number> {
    const range = await shownRange(page);
    const params = { merchantId, ...range };
    // One after another: the API answers a key's third stats read in flight with 429.
    const summary = await sdk.stats.summary({ ...params, compare: 'previous' });
    const daily = await sdk.stats.timeseries({ ...params, interval: 'day' });
    const pages = await sdk.stats.breakdown({ ...params, dimension: 'path', limit: 10 });
    const referrers = await sdk.stats.breakdown({ ...params, dimension: 'referrer', limit: 10 });
    const sources = await sdk.stats.breakdown({ ...params, dimension: 'utm_source', limit: 10 });
    const previous = summary.previous?.totals;
    if (!previous) throw new Error('the API answered no previous period');
    for (const metric of ['visitors', 'pageviews', 'purchases'] as const) {
      const shown = await kpi(page, metric);
      expect(count(shown.value), metric).toBe(summary.totals[metric]);
      expect(shown.change, metric).toBe(expectedChange(summary.totals[metric], previous[metric]));
    }
    for (const { currency, amount: sum } of summary.totals.revenue) {
      const shown = await kpi(page, `revenue-${currency}`);
      expect(amount(shown.value), currency).toBe(Number(sum));
      const before = previous.revenue.find((r) => r.currency === currency)?.amount ?? '0';
      expect(shown.change, currency).toBe(expectedChange(Number(sum), Number(before)));
    }
    // Today, the range's last day, is not over: its row says so.
    const days = await tableRows(page, 'Daily numbers');
    expect(days.map(([day, ...cells]) => [day, ...cells.map(count)])).toEqual(
      daily.points.map((p, i) => [
        `${p.start.slice(0, 10)}${i === daily.points.length - 1 ? ' (so far)' : ''}`,
        p.visitors,
        p.pageviews,
        p.purchases,
        p.events,
      ]),
    );
    const top = (answer: StatsBreakdown) =>
      [...answer.rows, ...(answer.other ? [answer.other] : [])].map((r) => [r.value, r.visitors, r.events]);
    for (const [name, answer] of [
      ['Top pages', pages],
      ['Top referrers', referrers],
      ['Top sources (utm_source)', sources],
    ] as const) {
      const shown = await tableRows(page, name);
      expect(
        shown.map(([value, visitors, events]) => [value, count(visitors ?? ''), count(events ?? '')]),
        name,
      ).toEqual(top(answer));
      expect(shown.length, name).toBeGreaterThan(0);
    }
    return daily.points.length;
  }

  /** uPlot's canvas in the element's shadow root: its size and how many pixels are drawn. */
  const chartPixels = (page: Page) =>
    page.evaluate<{ width: number; height: number; painted: number }>(`(() => {
      const canvas = document.querySelector('${DASHBOARD}').shadowRoot.querySelector('canvas');
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
      return { width: canvas.width, height: canvas.height, painted };
    })()`);

  it('shows the statistics API’s numbers on a page of another origin, and is keyboard-usable', async () => {
    expect(new URL(admin.url).origin).not.toBe(new URL(server.url).origin);
    const { context, page, errors } = await open();
    expect(errors, admin.output()).toEqual([]);
    expect(await shownRange(page)).toMatchObject({ timezone: 'UTC' });
    expect(await expectApiNumbers(page)).toBe(30);
    const drawn = await chartPixels(page);
    expect(drawn.width).toBeGreaterThan(300);
    expect(drawn.painted).toBeGreaterThan(drawn.width * 3);

    // The table is in the accessibility tree while folded; the toggle shows it, by keyboard.
    const toggle = page.locator(`${DASHBOARD} button[aria-controls="ptd-daily"]`);
    expect(await toggle.textContent()).toBe('Show as table');
    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await toggle.textContent()).toBe('Hide table');
    expect(await page.getByRole('table', { name: 'Daily numbers' }).isVisible()).toBe(true);

    // The range picker: arrow keys move between the periods, Enter picks one.
    await page.getByRole('button', { name: 'Last 30 days' }).focus();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed'))
      .toBe('true');
    await waitReady(page);
    expect(await expectApiNumbers(page)).toBe(7);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('keeps working once its sessions expire: renewed before expiry and after a 401, each time by the backend', async () => {
    const { context, page, errors, statuses } = await open();
    const before = sessionsCreated();
    expect(before).toBeGreaterThan(0);

    // Ahead of expiry: the SDK asks fetchSession (the backend) for a new session first.
    await page.waitForTimeout(SESSION_SECONDS * 1000 + 200);
    await page.getByRole('button', { name: 'Last 90 days' }).click();
    await waitReady(page);
    expect(sessionsCreated()).toBeGreaterThan(before);
    expect(await expectApiNumbers(page)).toBe(90);
    expect(statuses.filter((s) => s === 401)).toEqual([]);

    // After a 401: a token whose end the element does not know, already expired.
    const expired = await sdk.merchants.sessions.create({
      merchantId,
      allowedOrigins: [new URL(admin.url).origin],
      lifetimeSeconds: 1,
    });
    await page.waitForTimeout(Math.max(0, Date.parse(expired.expiresAt) - Date.now()) + 100);
    const asked = sessionsCreated();
    await page.evaluate(`(() => {
      const element = document.querySelector('${DASHBOARD}');
      element.setAttribute('merchant-id', ${JSON.stringify(merchantId)});
      element.sessionToken = ${JSON.stringify(expired.token)};
    })()`);
    await expect.poll(() => statuses.includes(401), { timeout: 10_000 }).toBe(true);
    await waitReady(page);
    expect(sessionsCreated()).toBeGreaterThan(asked);
    expect(await expectApiNumbers(page)).toBe(90);
    // The 401s are the API's answers the element handled, not page errors.
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    await context.close();
  }, 60_000);

  it('passes axe-core in light and in dark; screenshots of both', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page, errors } = await open(scheme);
      await expect.poll(async () => (await chartPixels(page)).painted).toBeGreaterThan(1000);
      const background = await page.evaluate<string>(
        `getComputedStyle(document.querySelector('${DASHBOARD}')).getPropertyValue('--ptd-color-bg').trim()`,
      );
      expect(background).toBe(scheme === 'dark' ? '#111827' : '#ffffff');
      const file = path.join(ARTIFACTS, `dashboard-${scheme}.png`);
      await page.screenshot({ path: file, fullPage: true });
      if (process.env.UPDATE_SCREENSHOTS) {
        mkdirSync(path.join(ROOT, 'docs/screenshots'), { recursive: true });
        copyFileSync(file, path.join(ROOT, `docs/screenshots/dashboard-${scheme}.png`));
      }
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
      expect(errors).toEqual([]);
      await context.close();
    }
  }, 90_000);

  it('says in plain words when there is nothing to show, and when it cannot load', async () => {
    const { context, page } = await open();
    const { merchantId: quiet } = await sdk.merchants.create({ name: 'Quiet Shop' });
    const session = await sdk.merchants.sessions.create({
      merchantId: quiet,
      allowedOrigins: [new URL(admin.url).origin],
    });
    const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    const fixed = { startDate: day(13), endDate: day(0) };
    // Two more elements on the partner's page: a merchant with no events, and a token that is no session.
    await page.evaluate(`(() => {
      for (const [id, merchant, token] of [
        ['empty', ${JSON.stringify(quiet)}, ${JSON.stringify(session.token)}],
        ['failing', ${JSON.stringify(quiet)}, 'ms_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      ]) {
        const element = document.createElement('${DASHBOARD}');
        element.id = id;
        element.setAttribute('api-base', ${JSON.stringify(server.url)});
        element.setAttribute('merchant-id', merchant);
        element.setAttribute('session-token', token);
        document.querySelector('main').append(element);
      }
      // A fixed range instead of the picker.
      document.getElementById('empty').setAttribute('start-date', ${JSON.stringify(fixed.startDate)});
      document.getElementById('empty').setAttribute('end-date', ${JSON.stringify(fixed.endDate)});
    })()`);
    await page.locator(`#empty[data-state="empty"]`).waitFor();
    expect(await page.locator('#empty').getByRole('status').textContent()).toBe('No visits yet in this period.');
    expect(await page.locator('#empty [data-metric="visitors"] .kpi-value').textContent()).toBe('0');
    expect(await page.evaluate(`document.getElementById('empty').range`)).toEqual({ ...fixed, timezone: 'UTC' });
    expect(await page.locator('#empty').getByRole('group', { name: 'Period' }).isHidden()).toBe(true);
    expect(await page.locator('#empty .range').textContent()).toContain('compared with the 14 days before');
    await page.locator(`#failing[data-state="error"]`).waitFor();
    const failing = page.locator('#failing').getByRole('status');
    expect(await failing.textContent()).toBe('Your session has ended. Reload the page to start a new one.Try again');
    expect(await failing.getByRole('button', { name: 'Try again' }).isVisible()).toBe(true);
    await context.close();
  }, 30_000);

  it('follows its theme attribute over the system setting', async () => {
    const { context, page } = await open('light');
    await page.getByRole('button', { name: 'Dark theme' }).click();
    const read = () =>
      page.evaluate<string>(
        `getComputedStyle(document.querySelector('${DASHBOARD}')).getPropertyValue('--ptd-color-bg').trim()`,
      );
    expect(await page.locator(DASHBOARD).getAttribute('theme')).toBe('dark');
    expect(await read()).toBe('#111827');
    await context.close();
  }, 30_000);
});
