// A merchant dashboard a partner would build: this backend reads one merchant's statistics with
// the SDK and serves one page that shows them (summary against the previous 30 days, a daily
// chart, top pages and sources). The API key stays here; the page reads /api/dashboard.
//
//   PARTNER_API_KEY=mp_test_... pnpm example:dashboard   # the test key the first `pnpm start` printed
//   MERCHANT_ID=<uuid> pnpm example:dashboard       # an existing merchant instead of demo data
//
// Without MERCHANT_ID (or with --seed) it first creates a demo merchant with a preverified tag
// and sends a few hundred events over the last days through the collector. With --check it then
// loads its own page and JSON, compares them with the SDK's answers and exits (CI's smoke run).
// Environment: see ../README.md; also DASHBOARD_PORT (3100), DASHBOARD_HOST (127.0.0.1),
// DASHBOARD_TIMEZONE (UTC).
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { PartnerClient } from '@partner/sdk';
import { type Dashboard, lastDays, loadDashboard } from './dashboard.js';
import { seedMerchant } from './seed.js';
import { startDashboardServer } from './server.js';

function apiKeyFromEnvOrOnboarding(): string | undefined {
  if (process.env.PARTNER_API_KEY) return process.env.PARTNER_API_KEY;
  const file = process.env.PARTNER_ONBOARDING_FILE;
  return file ? (JSON.parse(readFileSync(file, 'utf8')) as { apiKey: string }).apiKey : undefined;
}

/** Waits until the statistics count every event sent (they are kept as events are stored). */
async function waitCounted(client: PartnerClient, merchantId: string, timezone: string, sent: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { totals, previous } = await client.stats.summary({
      merchantId,
      timezone,
      ...lastDays(30, timezone),
      compare: 'previous',
    });
    const counted = totals.events + (previous?.totals.events ?? 0);
    if (counted === sent) return;
    if (Date.now() > deadline) throw new Error(`the statistics count ${counted} of the ${sent} events sent`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The smoke check: the page and its assets are served, and /api/dashboard says what the SDK says. */
async function check(client: PartnerClient, url: string, merchantId: string, timezone: string): Promise<void> {
  const page = await fetch(url);
  const html = await page.text();
  if (page.status !== 200 || !html.includes('/vendor/uPlot.iife.min.js'))
    throw new Error(`GET / answered ${page.status}`);
  for (const asset of ['app.js', 'style.css', 'vendor/uPlot.iife.min.js', 'vendor/uPlot.min.css']) {
    const res = await fetch(new URL(asset, url));
    if (res.status !== 200 || (await res.arrayBuffer()).byteLength === 0)
      throw new Error(`GET /${asset}: ${res.status}`);
  }
  const served = (await (await fetch(new URL('api/dashboard', url))).json()) as Dashboard;
  const direct = await loadDashboard(client, merchantId, timezone);
  if (!isDeepStrictEqual(served, direct)) throw new Error('/api/dashboard differs from the SDK answers');
  const { totals } = direct.summary;
  const daily = direct.daily.points.reduce((sum, p) => sum + p.events, 0);
  if (direct.daily.points.length !== 30 || daily !== totals.events) {
    throw new Error(`${direct.daily.points.length} daily points summing to ${daily}, summary says ${totals.events}`);
  }
  if (totals.pageviews === 0 || direct.pages.rows.length === 0 || direct.sources.rows.length === 0) {
    throw new Error('the demo merchant shows no page views, pages or sources');
  }
  console.log(
    `check: the page, its assets and /api/dashboard answer; ${totals.events} events, ${totals.visitors} visitors, ` +
      `${totals.pageviews} page views, ${totals.purchases} purchases (${totals.revenue.map((r) => `${r.amount} ${r.currency}`).join(', ')}), ` +
      `${direct.pages.rows.length} top pages, ${direct.referrers.rows.length} referrers, ${direct.sources.rows.length} utm sources`,
  );
}

async function main(): Promise<void> {
  const args = new Set(process.argv.slice(2));
  const client = new PartnerClient({
    apiKey: apiKeyFromEnvOrOnboarding(),
    baseURL: process.env.PARTNER_BASE_URL || 'http://localhost:3000',
    maxRetries: 3,
    timeout: 15_000,
  });
  const timezone = process.env.DASHBOARD_TIMEZONE || 'UTC';
  let merchantId = process.env.MERCHANT_ID || '';
  if (!merchantId || args.has('--seed')) {
    const seeded = await seedMerchant(client, process.env.PARTNER_DOMAIN || 'demo-partner.example');
    merchantId = seeded.merchantId;
    console.log(`seeded merchant ${merchantId} (${seeded.name}): ${seeded.sent} events sent to /v1/collect`);
    await waitCounted(client, merchantId, timezone, seeded.sent);
  }
  const server = await startDashboardServer({
    client,
    merchantId,
    timezone,
    host: process.env.DASHBOARD_HOST || '127.0.0.1',
    port: args.has('--check') ? 0 : Number(process.env.DASHBOARD_PORT || 3100),
  });
  console.log(`dashboard of merchant ${merchantId}: ${server.url}`);
  if (args.has('--check')) {
    try {
      await check(client, server.url, merchantId, timezone);
    } finally {
      await server.close();
    }
    return;
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
