// The partner backend: its admin page (on this origin, not the API's), the element's bundle from
// @partner/elements, and POST /api/session, which creates a merchant session with the SDK. The API
// key stays here; the page only ever holds a short-lived `ms_` token for one merchant.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { APIError, type PartnerClient } from '@partner/sdk';

const PUBLIC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../public');
const require = createRequire(import.meta.url);
/** The element, the SDK and uPlot in one file (`pnpm build` writes it). */
const ELEMENT_BUNDLE = require.resolve('@partner/elements/bundle');

const JS = 'text/javascript; charset=utf-8';
const FILES: Record<string, { file: string; type: string }> = {
  '/admin.js': { file: path.join(PUBLIC, 'admin.js'), type: JS },
  '/admin.css': { file: path.join(PUBLIC, 'admin.css'), type: 'text/css; charset=utf-8' },
  '/elements/partner-tags-dashboard.js': { file: ELEMENT_BUNDLE, type: JS },
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

export interface AdminServer {
  url: string;
  close(): Promise<void>;
}

export interface AdminOptions {
  client: PartnerClient;
  merchantId: string;
  merchantName: string;
  /** The API's address as the browser reaches it. */
  apiBase: string;
  timezone: string;
  sessionSeconds: number;
  host: string;
  port: number;
}

/** `POST /api/session`: a session for this page's origin only (a same-origin POST sends Origin). */
async function createSession(req: http.IncomingMessage, options: AdminOptions) {
  const origin = req.headers.origin;
  if (origin !== `http://${req.headers.host}`) return { status: 403, body: { error: 'not from this page' } };
  // A real partner first checks who is signed in and which merchant they may see.
  const session = await options.client.merchants.sessions.create({
    merchantId: options.merchantId,
    allowedOrigins: [origin],
    lifetimeSeconds: options.sessionSeconds,
  });
  console.log(`session for merchant ${session.merchantId} from ${origin}, expires ${session.expiresAt}`);
  return { status: 201, body: { token: session.token, expiresAt: session.expiresAt, merchantId: session.merchantId } };
}

export async function startAdminServer(options: AdminOptions): Promise<AdminServer> {
  const apiOrigin = new URL(options.apiBase).origin;
  const headers = {
    'content-security-policy': `default-src 'self'; connect-src 'self' ${apiOrigin}; img-src 'self' data:; object-src 'none'; base-uri 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  };
  const page = (await readFile(path.join(PUBLIC, 'index.html'), 'utf8'))
    .replaceAll('{{API_BASE}}', escapeHtml(options.apiBase))
    .replaceAll('{{TIMEZONE}}', escapeHtml(options.timezone))
    .replaceAll('{{MERCHANT_NAME}}', escapeHtml(options.merchantName));
  const server = http.createServer(async (req, res) => {
    const route = new URL(req.url ?? '/', 'http://localhost').pathname;
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { ...headers, 'content-type': type });
      res.end(body);
    };
    try {
      if (route === '/api/session' && req.method === 'POST') {
        const { status, body } = await createSession(req, options);
        return send(status, 'application/json; charset=utf-8', JSON.stringify(body));
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
      if (route === '/') return send(200, 'text/html; charset=utf-8', page);
      const entry = FILES[route];
      if (!entry) return send(404, 'text/plain', 'not found\n');
      return send(200, entry.type, await readFile(entry.file));
    } catch (error) {
      // The API's message is for the partner's logs; the page gets a short reason.
      const reason = error instanceof APIError ? `${error.status} ${error.code}` : 'unavailable';
      console.error(`${route}: ${error instanceof Error ? error.message : String(error)}`);
      return send(502, 'application/json; charset=utf-8', JSON.stringify({ error: `the session is ${reason}` }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
