import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DOCS_PATH } from '../../routes/route-table.js';

/** The interactive API reference at `GET /docs`. */

/** Self only. Swagger UI sets inline `style` attributes (React) and draws some icons as data: URIs. */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Partner Tags API reference</title>
<link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
<link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  docExpansion: 'list',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** Files copied from `swagger-ui-dist`, by the name they are served under. */
const DIST_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const distDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const cache = new Map<string, Promise<Buffer>>();

function send(res: ServerResponse, status: number, type: string, body: Buffer | string, head: boolean): void {
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(head ? undefined : body);
}

/** Answers `/docs`, `/docs/` and the page's assets; returns false for any other path under /docs. */
export async function handleDocs(res: ServerResponse, pathname: string, method: string): Promise<boolean> {
  const head = method === 'HEAD';
  res.setHeader('content-security-policy', DOCS_CSP);
  if (pathname === DOCS_PATH || pathname === `${DOCS_PATH}/`) {
    res.setHeader('cache-control', 'no-cache');
    send(res, 200, 'text/html; charset=utf-8', PAGE, head);
    return true;
  }
  const name = pathname.slice(DOCS_PATH.length + 1);
  if (name === 'init.js') {
    res.setHeader('cache-control', 'no-cache');
    send(res, 200, 'text/javascript; charset=utf-8', INIT, head);
    return true;
  }
  const type = Object.hasOwn(DIST_FILES, name) ? DIST_FILES[name] : undefined;
  if (!type) return false;
  let file = cache.get(name);
  if (!file) {
    file = readFile(path.join(distDir, name));
    cache.set(name, file);
    file.catch(() => cache.delete(name));
  }
  const body = await file;
  res.setHeader('cache-control', 'public, max-age=3600');
  send(res, 200, type, body, head);
  return true;
}
