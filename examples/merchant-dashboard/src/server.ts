// The partner backend: the page, its script and styles, uPlot from node_modules, and one JSON
// endpoint the page reads. Nothing is built: the browser gets these files as they are.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { APIError, type PartnerClient } from '@partner/sdk';
import { loadDashboard } from './dashboard.js';

const PUBLIC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../public');
const require = createRequire(import.meta.url);
const UPLOT = path.join(path.dirname(require.resolve('uplot/package.json')), 'dist');

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: path.join(PUBLIC, 'index.html'), type: 'text/html; charset=utf-8' },
  '/app.js': { file: path.join(PUBLIC, 'app.js'), type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: path.join(PUBLIC, 'style.css'), type: 'text/css; charset=utf-8' },
  '/vendor/uPlot.iife.min.js': { file: path.join(UPLOT, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  '/vendor/uPlot.min.css': { file: path.join(UPLOT, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

const HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export interface DashboardServer {
  url: string;
  close(): Promise<void>;
}

export async function startDashboardServer(options: {
  client: PartnerClient;
  merchantId: string;
  timezone: string;
  host: string;
  port: number;
}): Promise<DashboardServer> {
  const server = http.createServer(async (req, res) => {
    const route = new URL(req.url ?? '/', 'http://localhost').pathname;
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { ...HEADERS, 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    try {
      if (route === '/api/dashboard') {
        const data = await loadDashboard(options.client, options.merchantId, options.timezone);
        return send(200, 'application/json; charset=utf-8', JSON.stringify(data));
      }
      const entry = FILES[route];
      if (!entry) return send(404, 'text/plain', 'not found\n');
      return send(200, entry.type, await readFile(entry.file));
    } catch (error) {
      // The API's message and request id are for the partner's logs; the page gets a short reason.
      const reason = error instanceof APIError ? `${error.status} ${error.code}` : 'unavailable';
      console.error(`${route}: ${error instanceof Error ? error.message : String(error)}`);
      return send(502, 'application/json; charset=utf-8', JSON.stringify({ error: `the statistics are ${reason}` }));
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
