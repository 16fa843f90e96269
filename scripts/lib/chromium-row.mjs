// The runtime matrix's Chromium row (scripts/runtime-matrix.mjs): the packed SDK's ESM build,
// loaded unbundled (an import map names `@partner/sdk` and `ky` in the installed node_modules) by a
// page served from an origin other than the API's (another port). The page holds only a merchant
// session that this script, as the partner's backend, created with the API key: it refuses a
// `PartnerClient`, then reads the merchant's statistics and its tag's status with `MerchantClient`.
// Driven by playwright-core (the workspace's) with Debian's /usr/bin/chromium, never a download.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './partner-server.mjs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PAGE_DEADLINE_MS = 60_000;

/** The page's program: plain browser JavaScript; its outcome lands in `window.__result`. */
const PAGE_SCRIPT = `
import { MerchantClient, PartnerClient, PartnerError } from '@partner/sdk';
const config = JSON.parse(document.getElementById('config').textContent);
async function smoke() {
  try {
    new PartnerClient({ apiKey: 'mp_live_never_in_a_page', baseURL: config.baseURL });
    throw new Error('PartnerClient with an API key started in a page');
  } catch (error) {
    if (!(error instanceof PartnerError)) throw error;
  }
  const client = new MerchantClient({ baseURL: config.baseURL, sessionToken: config.token, expiresAt: config.expiresAt });
  const range = { merchantId: config.merchantId, startDate: config.today, endDate: config.today, timezone: 'UTC' };
  // The server sends the events it stored to the statistics before its own reads; accepted events
  // may still be on their way to storage: wait for the 3 events sent.
  const deadline = Date.now() + 30000;
  let answer;
  for (;;) {
    answer = await client.stats.summary(range).withResponse();
    if (answer.data.totals.events === 3 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (answer.data.totals.events !== 3) throw new Error('stats.summary: ' + answer.data.totals.events + ' events, expected 3');
  if (!answer.requestId) throw new Error('stats.summary().withResponse(): no requestId');
  const tag = await client.tags.retrieve(config.tagId);
  if (tag.status !== 'active') throw new Error('tags.retrieve: status ' + tag.status + ', expected active');
  return { events: answer.data.totals.events, requestId: answer.requestId, tagStatus: tag.status };
}
smoke().then(
  (result) => { window.__result = { ok: true, ...result }; },
  (error) => { window.__result = { ok: false, error: (error && error.name ? error.name + ': ' : '') + (error && error.message ? error.message : String(error)) }; },
);
`;

const page = (config, importMap) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Partner SDK in Chromium</title>
<script type="importmap">${JSON.stringify({ imports: importMap })}</script>
<script type="application/json" id="config">${JSON.stringify(config)}</script>
<script type="module" src="/smoke.js"></script>
</head>
<body></body>
</html>
`;

/** The entry file of an installed package's ESM build (its `exports` default, else `module`/`main`). */
function esmEntry(nodeModules, name) {
  const manifest = JSON.parse(readFileSync(path.join(nodeModules, name, 'package.json'), 'utf8'));
  const dot = manifest.exports?.['.'] ?? manifest.exports;
  const entry = dot?.import?.default ?? dot?.import ?? dot?.default ?? manifest.module ?? manifest.main;
  return `/node_modules/${name}/${String(entry).replace(/^\.\//, '')}`;
}

/** Serves the page (`html()`) and the two packages' files (only below node_modules/@partner/sdk and ky). */
function servePage(app, html) {
  const nodeModules = path.join(app, 'node_modules');
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://page.invalid');
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html());
      return;
    }
    if (url.pathname === '/smoke.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(PAGE_SCRIPT);
      return;
    }
    const file = path.normalize(path.join(app, decodeURIComponent(url.pathname)));
    const allowed = [path.join(nodeModules, '@partner/sdk') + path.sep, path.join(nodeModules, 'ky') + path.sep];
    if (!allowed.some((dir) => file.startsWith(dir))) {
      res.writeHead(404).end();
      return;
    }
    try {
      const type = file.endsWith('.js') ? 'text/javascript' : 'application/json';
      res.writeHead(200, { 'content-type': `${type}; charset=utf-8` }).end(readFileSync(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * Runs the row: the partner's backend part with the packed SDK in Node (merchant, live tag, 3
 * events, a merchant session for the page's origin), then the page in Chromium. Resolves with
 * `{ ok, detail }` or `{ ok: false, error }`.
 */
export async function runChromiumRow({ app, server }) {
  const sdkUrl = pathToFileURL(path.join(app, 'node_modules/@partner/sdk/dist/index.js')).href;
  const { PartnerClient } = await import(sdkUrl);
  const backend = new PartnerClient({ apiKey: server.apiKey, baseURL: server.baseUrl });
  const runId = `chromium-${Date.now().toString(36)}`;
  const { merchantId } = await backend.merchants.create({ name: `Matrix ${runId}` });
  const tag = await backend.tags.generate({ merchantId, domain: `${runId}.${server.partnerDomain}` });
  await backend.events.send({
    tagId: tag.tagId,
    events: [{ event_name: 'PageView' }, { event_name: 'AddToCart' }, { event_name: 'Purchase' }],
  });

  const nodeModules = path.join(app, 'node_modules');
  const importMap = { '@partner/sdk': esmEntry(nodeModules, '@partner/sdk'), ky: esmEntry(nodeModules, 'ky') };
  let pageServer;
  let browser;
  try {
    // The page's origin is known once it listens; the session is made for it, then the page served.
    let html = '';
    pageServer = await servePage(app, () => html);
    const origin = `http://127.0.0.1:${pageServer.address().port}`;
    if (origin === server.baseUrl) throw new Error('the page and the API share an origin');
    const session = await backend.merchants.sessions.create({ merchantId, allowedOrigins: [origin] });
    html = page(
      {
        baseURL: server.baseUrl,
        token: session.token,
        expiresAt: session.expiresAt,
        merchantId,
        tagId: tag.tagId,
        today: new Date().toISOString().slice(0, 10),
      },
      importMap,
    );
    const { chromium } = createRequire(path.join(root, 'packages/server/package.json'))('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Headless Chromium's own user agent names HeadlessChrome: the collectors drop it as a bot's.
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--user-agent=Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
      ],
    });
    const tab = await browser.newPage();
    const errors = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(`${origin}/`);
    const handle = await tab
      .waitForFunction(() => window.__result, null, { timeout: PAGE_DEADLINE_MS })
      .catch(() => null);
    const result = handle ? await handle.jsonValue() : { ok: false, error: `no result within ${PAGE_DEADLINE_MS} ms` };
    if (!result.ok) return { ok: false, error: [result.error, ...errors].join(' / ') };
    return {
      ok: true,
      detail: `page on ${origin}, API on ${server.baseUrl}: PartnerClient refused, MerchantClient read ${result.events} events (requestId ${result.requestId}), tag ${result.tagStatus}`,
    };
  } finally {
    await browser?.close();
    pageServer?.close();
  }
}
