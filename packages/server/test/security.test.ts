import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRaw } from '../scripts/lib/fuzz.js';
import { type RunningApp, startApp } from '../src/app.js';
import { type DatabaseHandle, openDatabase } from '../src/db/client.js';
import { onboardPartner } from '../src/features/partners/onboard-partner.js';
import { parseEnv } from '../src/kernel/env.js';
import { createLogger } from '../src/kernel/logger.js';
import { openTestPglite, startTestDnsServer, type TestDnsServer, uniquePartnerDomain } from '../src/testing/index.js';
import { testDataDir } from '../src/testing/test-app-env.js';

/** Everything the server logs at trace level, as text. */
let logs = '';
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logs += chunk.toString('utf8');
    done();
  },
});

let database: DatabaseHandle;
let dns: TestDnsServer;
let app: RunningApp;
let apiKey: string;

beforeAll(async () => {
  const url = process.env.TEST_DATABASE_URL;
  database = url ? await openDatabase({ kind: 'postgres', url, maxConnections: 4 }) : await openTestPglite();
  dns = await startTestDnsServer();
  const env = parseEnv({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'trace',
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '500',
    RATE_LIMIT_PER_MINUTE: '1000',
    // The statistics' chDB directory of this test process, never the repository's .data/.
    DATA_DIR: testDataDir(),
    ...(url ? { DATABASE_URL: url } : {}),
  });
  apiKey = (await onboardPartner(database.db, { name: 'Sec', domain: uniquePartnerDomain() }, env.TAG_TARGET_HOST))
    .apiKey;
  app = await startApp(env, { database, logger: createLogger(env, sink) });
});
afterAll(async () => {
  await app?.close(1000);
  await database?.close();
  await dns?.close();
});

const MB = 1024 * 1024;

describe('security headers', () => {
  it('every kind of response has nosniff, no x-powered-by, and /docs a strict CSP', async () => {
    const auth = { authorization: `Bearer ${apiKey}` };
    const cases: Array<{ method: string; path: string; headers?: Record<string, string>; body?: string }> = [
      { method: 'GET', path: '/healthz' },
      { method: 'GET', path: '/readyz' },
      { method: 'GET', path: '/openapi.json' },
      { method: 'GET', path: '/v1/partners/merchant', headers: auth },
      { method: 'GET', path: '/v1/partners/merchant' },
      { method: 'GET', path: '/v1/partners/nothing-here', headers: auth },
      { method: 'POST', path: '/v1/collect', headers: { 'content-type': 'application/json' }, body: '{' },
      { method: 'GET', path: '/trpc/merchant.list', headers: auth },
      { method: 'GET', path: '/docs' },
      { method: 'GET', path: '/nope' },
      // Rejected by Node's parser before any listener (header over 16 KB): answered by client-error.ts.
      { method: 'GET', path: '/healthz', headers: { 'x-big': 'a'.repeat(20_000) } },
    ];
    for (const c of cases) {
      const res = await new Promise<{ status: number; headers: Record<string, unknown>; text: string }>(
        (resolve, reject) => {
          import('node:http').then(({ request }) => {
            const url = new URL(app.url);
            const req = request(
              { host: url.hostname, port: url.port, method: c.method, path: c.path, headers: c.headers },
              (response) => {
                let text = '';
                response.on('data', (chunk: Buffer) => {
                  text += chunk.toString();
                });
                response.on('end', () =>
                  resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
                );
              },
            );
            req.on('error', reject);
            req.end(c.body);
          }, reject);
        },
      );
      const where = `${c.method} ${c.path} (${res.status})`;
      expect(res.headers['x-content-type-options'], where).toBe('nosniff');
      expect(res.headers['x-powered-by'], where).toBeUndefined();
      expect(res.headers.server, where).toBeUndefined();
      if (res.status >= 400 && !c.path.startsWith('/trpc')) {
        const body = JSON.parse(res.text);
        // A missing bearer token gets the spec's own 401 body; every other error `{ message, code }`.
        if ('statusCode' in body)
          expect(body, where).toEqual({ statusCode: 401, message: expect.any(String), error: 'Unauthorized' });
        else expect(body, where).toEqual({ message: expect.any(String), code: expect.any(String) });
      }
      if (c.path === '/docs') {
        expect(res.status).toBe(200);
        const csp = String(res.headers['content-security-policy'] ?? '');
        expect(csp).toContain("default-src 'none'");
        expect(csp).toContain("script-src 'self'");
        expect(csp).not.toContain('unsafe-eval');
        expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
      }
    }
  });
});

describe('request bodies are size-limited on every route', () => {
  it.each([
    ['/v1/collect', false],
    ['/v1/partners/merchant', true],
    ['/v1/partners/tag/generate', true],
    ['/v1/partners/tag/verify', true],
    ['/trpc/merchant.create', true],
    ['/trpc/collect.ingest', false],
  ])('POST %s with 1 MB + 1 byte answers 413', async (path, authenticated) => {
    const body = `{"name":"${'a'.repeat(MB)}"}`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authenticated) headers.authorization = `Bearer ${apiKey}`;
    const res = await sendRaw(app.url, { endpoint: path, method: 'POST', path, headers, body });
    expect(res.status).toBe(413);
  });
});

describe('API keys never reach the logs', () => {
  it('logs requests with valid, wrong and misplaced keys without the key', async () => {
    const wrong = `mp_live_${'Z'.repeat(32)}`;
    const send = (path: string, key: string, init: RequestInit = {}) =>
      fetch(`${app.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
      });
    await (await send('/v1/partners/merchant', apiKey)).text();
    await (
      await send('/v1/partners/merchant', apiKey, { method: 'POST', body: JSON.stringify({ name: 'Log' }) })
    ).text();
    await (await send('/v1/partners/merchant', wrong)).text();
    await (await send(`/v1/partners/merchant?api_key=${apiKey}`, apiKey)).text();
    await (
      await send('/v1/partners/merchant', apiKey, {
        method: 'POST',
        body: JSON.stringify({ name: apiKey.repeat(0), apiKey }),
      })
    ).text();
    await (await send('/trpc/merchant.list', apiKey)).text();
    await (await send('/trpc/merchant.list', wrong)).text();
    await (await fetch(`${app.url}/v1/partners/merchant`, { headers: { authorization: apiKey } })).text();
    expect(logs.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(8);
    const secretPart = apiKey.slice('mp_live_'.length);
    expect(logs).not.toContain(secretPart);
    expect(logs).not.toContain(wrong.slice('mp_live_'.length));
  });
});

describe('API key last_used_at', () => {
  it('is set after the key is used, off the request path', async () => {
    const { apiKeys } = await import('../src/db/schema/index.js');
    const { hashApiKey } = await import('../src/kernel/bearer-tokens.js');
    const { eq } = await import('drizzle-orm');
    const row = async () =>
      (
        await database.db
          .select()
          .from(apiKeys)
          .where(eq(apiKeys.keyHash, hashApiKey(apiKey)))
      )[0];
    await (await fetch(`${app.url}/v1/partners/merchant`, { headers: { authorization: `Bearer ${apiKey}` } })).text();
    let lastUsed: Date | null | undefined;
    for (let i = 0; i < 50 && !lastUsed; i++) {
      lastUsed = (await row())?.lastUsedAt;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(lastUsed).toBeInstanceOf(Date);
    expect(Math.abs(Date.now() - (lastUsed as Date).getTime())).toBeLessThan(60_000);
  });
});
