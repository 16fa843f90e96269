// A demo shop on localhost whose real tag talks to your local API: open it, click around, and watch
// the events arrive (in the page's side panel, `GET /v1/partners/events` and the statistics).
//
//   PARTNER_API_KEY=mp_test_... pnpm example:shop    # the test key the first `pnpm start` printed
//
// It creates a merchant with a preverified tag under the partner's domain (live at once, no DNS),
// reads the tag's install snippet and serves pages carrying it on http://127.0.0.1:3300; the tag's
// collector host resolves nowhere locally, so this server forwards the collector's paths to the API
// under that host name (src/shop-server.ts). With --check it loads the page, the tag script and one
// batch of events as the tag sends it, waits for them in the event list and the statistics, and
// exits (CI's smoke run). Environment: see ../README.md; also SHOP_PORT (3300), SHOP_HOST (127.0.0.1),
// SHOP_COLLECTOR_URL (where the API serves collector hosts; default PARTNER_BASE_URL).
import { readFileSync } from 'node:fs';
import { PartnerClient } from '@partner/sdk';
import { PRODUCTS, startShopServer } from './shop-server.js';

function apiKeyFromEnvOrOnboarding(): string {
  if (process.env.PARTNER_API_KEY) return process.env.PARTNER_API_KEY;
  const file = process.env.PARTNER_ONBOARDING_FILE;
  if (file) return (JSON.parse(readFileSync(file, 'utf8')) as { apiKey: string }).apiKey;
  console.error('Set PARTNER_API_KEY: the test key (mp_test_...) the first `pnpm start` printed, or a key of yours.');
  process.exit(2);
}

/** Polls until `ready` says yes (the API stores and counts a batch within moments). */
async function until<T>(what: string, read: () => Promise<T>, ready: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not there after 20 s (${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The smoke check: what a browser does on the home page, without a browser. */
async function check(client: PartnerClient, url: string, merchantId: string, tagId: string): Promise<void> {
  const home = await fetch(url);
  const html = await home.text();
  const script = new URL(`t/${tagId}.js`, url).href;
  if (home.status !== 200 || !html.includes(JSON.stringify(script))) {
    throw new Error(`GET / answered ${home.status} without the snippet loading ${script}`);
  }
  const tag = await fetch(script);
  if (tag.status !== 200 || !(await tag.text()).includes(tagId)) throw new Error(`GET ${script}: ${tag.status}`);
  const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
  // One batch as the tag sends it: a text/plain string body (no preflight) from the page's origin.
  const runId = Date.now().toString(36);
  const [sku, value] = [PRODUCTS[0]?.sku, PRODUCTS[0]?.price];
  const events = [
    { id: `${runId}-1`, event_name: 'PageView', data: { url, path: '/', referrer: '', title: 'Demo Shop' } },
    { id: `${runId}-2`, event_name: 'Purchase', data: { sku, value, currency: 'EUR' } },
  ];
  const sent = await fetch(new URL('e', url), {
    method: 'POST',
    // A browser's user agent: the collector drops what isbot names a bot, Node's own `node` included.
    headers: { 'content-type': 'text/plain;charset=UTF-8', origin: new URL(url).origin, 'user-agent': BROWSER },
    body: JSON.stringify({ tagId, events }),
  });
  const cookie = sent.headers.get('set-cookie') ?? '';
  if (sent.status !== 202) throw new Error(`POST /e answered ${sent.status}: ${await sent.text()}`);
  if (!/^muid=/.test(cookie) || /domain=/i.test(cookie)) throw new Error(`POST /e set the cookie ${cookie}`);
  const stored = await until(
    'the batch in GET /v1/partners/events',
    () => client.events.list({ merchantId, limit: 10 }),
    (page) => page.data.length === 2,
  );
  const purchase = stored.data.find((e) => e.event_name === 'Purchase');
  if ((purchase?.data as { sku?: string } | undefined)?.sku !== sku) throw new Error('the Purchase lost its data');
  const today = new Date();
  await until(
    "today's statistics",
    () => client.stats.summary({ merchantId, startDate: today, endDate: today }),
    (s) => s.totals.pageviews === 1 && s.totals.purchases === 1,
  );
  const panel = (await (await fetch(new URL('api/activity', url))).json()) as { total: number };
  if (panel.total !== 2) throw new Error(`the side panel shows ${panel.total} events`);
  console.log('check: the page, the tag script through the local collector, a batch stored and counted, the panel');
}

async function main(): Promise<void> {
  const checking = process.argv.includes('--check');
  const apiKey = apiKeyFromEnvOrOnboarding();
  const client = new PartnerClient({
    apiKey,
    baseURL: process.env.PARTNER_BASE_URL || 'http://localhost:3000',
    maxRetries: 3,
    timeout: 15_000,
  });
  const partnerDomain = process.env.PARTNER_DOMAIN || 'demo-partner.example';
  const { merchantId } = await client.merchants.create({ name: `Demo Shop ${new Date().toISOString().slice(0, 16)}` });
  // A domain under the partner's own: preverified, active at once (a custom domain needs its CNAME).
  const domain = `shop.${partnerDomain}`;
  const tag = await client.tags.generate({ merchantId, domain });
  const snippet = await client.tags.snippet(tag.tagId);
  // Where collector hosts are served: the API's port, or its COLLECTOR_PORT listener when it has one.
  const collectorUrl = process.env.SHOP_COLLECTOR_URL || client.baseURL;
  console.log(`merchant ${merchantId}, tag ${tag.tagId} (${tag.status}${tag.livemode ? '' : ', test mode'})`);
  console.log(`collector host ${snippet.collectorHost}: forwarded to ${collectorUrl} by this server`);
  const server = await startShopServer({
    client,
    merchantId,
    tagId: tag.tagId,
    collectorHost: snippet.collectorHost,
    collectorUrl,
    snippetHtml: snippet.html,
    scriptUrl: snippet.scriptUrl,
    siteOrigin: `https://${domain}`,
    host: process.env.SHOP_HOST || '127.0.0.1',
    port: checking ? 0 : Number(process.env.SHOP_PORT || 3300),
  });
  if (checking) {
    try {
      await check(client, server.url, merchantId, tag.tagId);
    } finally {
      await server.close();
    }
    return;
  }
  const api = client.baseURL.replace(/\/$/, '');
  console.log(`\nDemo shop: ${server.url}  (open it, click around; the side panel shows what arrives)`);
  console.log('The same from a terminal:');
  console.log(
    `  curl -s "${api}/v1/partners/events?merchantId=${merchantId}" -H "Authorization: Bearer $PARTNER_API_KEY"`,
  );
  const day = new Date().toISOString().slice(0, 10);
  console.log(
    `  curl -s "${api}/v1/partners/stats/summary?merchantId=${merchantId}&startDate=${day}&endDate=${day}" -H "Authorization: Bearer $PARTNER_API_KEY"`,
  );
  console.log('Ctrl-C to stop.');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
