// The demo shop's web server: a few pages carrying the tag snippet, and the tag's collector paths
// (`GET /t/<tagId>.js`, `POST /e`) forwarded to the API under the tag's collector host name.
//
// In production the merchant publishes a CNAME so that the collector host (`edge-xxxxxx.<domain>`)
// reaches the API, and the page and the collector share the merchant's domain. Locally that name
// resolves nowhere, so this server stands in for it: the page loads the tag from this origin and
// each collector request is sent on to the API with `Host: <collector host>` (how the API routes a
// collector), the page's `Origin` as the merchant's site, and the muid cookie kept on this origin.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PartnerClient } from '@partner/sdk';

const PUBLIC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../public');

export interface Product {
  sku: string;
  name: string;
  price: number;
}

export const PRODUCTS: Product[] = [
  { sku: 'TENT-2P', name: 'Two-person tent', price: 189 },
  { sku: 'BOOT-TR', name: 'Trail boots', price: 129.5 },
  { sku: 'LAMP-HD', name: 'Head lamp', price: 34.9 },
];
const CURRENCY = 'EUR';

export interface ShopOptions {
  client: PartnerClient;
  merchantId: string;
  tagId: string;
  /** The tag's collector host, as `client.tags.snippet` names it. */
  collectorHost: string;
  /** Where the API answers collector hosts: its own URL, or its COLLECTOR_PORT listener. */
  collectorUrl: string;
  /** The snippet's `html`, to put in every page (its script URL is pointed at this server). */
  snippetHtml: string;
  scriptUrl: string;
  /** The merchant's site as the collector knows it: the `Origin` of the forwarded collector calls. */
  siteOrigin: string;
  host: string;
  port: number;
}

export interface ShopServer {
  url: string;
  close(): Promise<void>;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function page(options: ShopOptions, origin: string, title: string, body: string): string {
  // The real snippet, its script URL on this origin instead of https://<collector host>.
  const snippet = options.snippetHtml.replace(options.scriptUrl, `${origin}/t/${options.tagId}.js`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Demo Shop</title>
<link rel="stylesheet" href="/shop.css">
${snippet}
<script src="/shop.js" defer></script>
</head>
<body>
<header><a href="/">Demo Shop</a><span>a test-mode tag, collected by your local server</span></header>
<main>${body}</main>
<aside id="activity" aria-live="polite"><h2>Arriving at the API</h2><p>Loading…</p></aside>
</body>
</html>`;
}

const price = (product: Product) => `${product.price.toFixed(2)} ${CURRENCY}`;

function home(): string {
  const items = PRODUCTS.map(
    (p) => `<li><a href="/product/${p.sku}">${escapeHtml(p.name)}</a> <span>${price(p)}</span></li>`,
  ).join('');
  return `<h1>Gear for the trail</h1><p>Open a product, add it to the cart, buy it: each is an event.</p><ul class="products">${items}</ul>`;
}

function product(p: Product): string {
  const data = escapeHtml(JSON.stringify({ sku: p.sku, value: p.price, currency: CURRENCY }));
  return `<h1>${escapeHtml(p.name)}</h1><p class="price">${price(p)}</p>
<p><button data-track="AddToCart" data-event="${data}">Add to cart</button>
<button data-track="Purchase" data-event="${data}" data-then="/thanks">Buy now</button></p>
<p><a href="/">Back to the shop</a></p>`;
}

/** Sends a collector request on to the API under the collector host (see the header). */
function forward(req: http.IncomingMessage, res: http.ServerResponse, options: ShopOptions, api: URL): void {
  const headers: http.OutgoingHttpHeaders = { ...req.headers, host: options.collectorHost };
  // The collector accepts pages on the tag's own domain only: this page stands in for the merchant's.
  if (headers.origin) headers.origin = options.siteOrigin;
  delete headers.referer;
  const send = api.protocol === 'https:' ? https.request : http.request;
  const upstream = send(
    {
      hostname: api.hostname,
      port: api.port || (api.protocol === 'https:' ? 443 : 80),
      path: req.url,
      method: req.method,
      headers,
      servername: api.hostname,
    },
    (answer) => {
      const out = { ...answer.headers };
      // The cookie names the merchant's domain, which a page on this origin may not set: keep it here.
      const cookies = answer.headers['set-cookie'];
      if (cookies) out['set-cookie'] = cookies.map((cookie) => cookie.replace(/;\s*Domain=[^;]*/i, ''));
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
    },
  );
  upstream.on('error', (error) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: `the API did not answer: ${error.message}`, code: 'SERVICE_UNAVAILABLE' }));
  });
  req.pipe(upstream);
}

/** The page's live panel: the merchant's latest events and today's totals, read with the SDK. */
async function activity(options: ShopOptions) {
  const { client, merchantId } = options;
  const today = new Date();
  const [latest, summary] = await Promise.all([
    client.events.list({ merchantId, limit: 8 }),
    // A Date is its calendar date in the call's zone (UTC here): today's totals.
    client.stats.summary({ merchantId, startDate: today, endDate: today }),
  ]);
  return {
    merchantId,
    events: latest.data.map((e) => ({ time: e.event_time, name: e.event_name, visitor: e.muid, data: e.data })),
    total: latest.pagination.totalItems,
    today: summary.totals,
  };
}

async function serveFile(res: http.ServerResponse, name: string, type: string): Promise<void> {
  const body = await readFile(path.join(PUBLIC, name));
  res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' }).end(body);
}

export async function startShopServer(options: ShopOptions): Promise<ShopServer> {
  const api = new URL(options.collectorUrl);
  const scriptPath = `/t/${options.tagId}.js`;
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://shop.invalid').pathname;
    const origin = `http://${req.headers.host ?? `${options.host}:${options.port}`}`;
    const html = (status: number, title: string, body: string) =>
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(page(options, origin, title, body));
    if (pathname === scriptPath || pathname === '/e') return forward(req, res, options, api);
    if (req.method !== 'GET') return res.writeHead(405, { allow: 'GET' }).end();
    if (pathname === '/') return html(200, 'Gear for the trail', home());
    const sku = /^\/product\/([A-Z0-9-]+)$/.exec(pathname)?.[1];
    const item = PRODUCTS.find((p) => p.sku === sku);
    if (item) return html(200, item.name, product(item));
    if (pathname === '/thanks')
      return html(200, 'Thank you', '<h1>Thank you!</h1><p><a href="/">Keep shopping</a></p>');
    if (pathname === '/shop.js') return void serveFile(res, 'shop.js', 'text/javascript; charset=utf-8');
    if (pathname === '/shop.css') return void serveFile(res, 'shop.css', 'text/css; charset=utf-8');
    if (pathname === '/api/activity') {
      return void activity(options).then(
        (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
        (error: unknown) =>
          res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) })),
      );
    }
    html(404, 'Not found', '<h1>Not found</h1><p><a href="/">Back to the shop</a></p>');
  });
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(options.port, options.host, resolve),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
