import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../src/app.js';
import { tags } from '../src/db/schema/index.js';
import { freePort, startTestServer, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';
import {
  allEvents,
  collectorHostOf,
  listedStatus,
  postEvents,
  preverifiedTag,
  rawRequest,
  verifiedTag,
} from './helpers/collector.js';
import { collectOk, type GeneratedTag, generateTag } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const muidOf = (setCookie: string[] | undefined) => /(?:^|;\s*)muid=([^;]+)/.exec(setCookie?.[0] ?? '')?.[1];

describe('collector hosts: routing by Host', () => {
  it("serves a custom tag's script on <record>.<domain> only, and 404 on every other host", async () => {
    const tag = await verifiedTag(server);
    const other = await verifiedTag(server);
    const host = `${tag.record.name}.${tag.domain}`;
    expect(await collectorHostOf(server, tag)).toBe(host);

    const ok = await rawRequest(server.url, { path: `/t/${tag.tagId}.js`, host });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(ok.text).toContain(tag.tagId);
    // The port in the Host header does not matter.
    expect(
      (await rawRequest(server.url, { path: `/t/${tag.tagId}.js`, host: `${host.toUpperCase()}:8443` })).status,
    ).toBe(200);

    const foreignHosts = [`${other.record.name}.${other.domain}`, 'unknown.example.com', '127.0.0.1', undefined];
    for (const foreign of foreignHosts) {
      const res = await rawRequest(server.url, { path: `/t/${tag.tagId}.js`, host: foreign });
      expect(res.status, `host ${foreign}`).toBe(404);
      expect(res.json).toEqual({ message: 'Not found', code: 'NOT_FOUND' });
    }
  });

  it("serves a preverified tag's script on the partner's onboarding record host", async () => {
    const tag = await preverifiedTag(server);
    const host = `${server.partner.record.name}.${server.partner.domain}`;
    expect(await collectorHostOf(server, tag)).toBe(host);
    expect((await rawRequest(server.url, { path: `/t/${tag.tagId}.js`, host })).status).toBe(200);
  });

  it('answers only collector routes on a collector host: the API is not reachable there', async () => {
    const tag = await verifiedTag(server);
    const host = `${tag.record.name}.${tag.domain}`;
    for (const path of ['/healthz', '/trpc/merchant.list', '/openapi.json', `/t/${randomUUID()}.js`, '/t/x.js']) {
      const res = await rawRequest(server.url, {
        path,
        host,
        headers: { authorization: `Bearer ${server.partner.apiKey}` },
      });
      expect(res.status, path).toBe(404);
    }
    // The API still answers on its own host.
    expect((await api(server).get('/healthz')).status).toBe(200);
  });

  it('answers on COLLECTOR_PORT for collector hosts only', async () => {
    const port = await freePort();
    // A second app on the same database, with a collector port.
    const other = await startApp(
      { ...server.app.deps.env, COLLECTOR_PORT: port },
      { database: server.app.database, dns: server.app.deps.dns },
    );
    try {
      const tag = await verifiedTag(server);
      const collectorUrl = `http://127.0.0.1:${port}`;
      const host = `${tag.record.name}.${tag.domain}`;
      expect((await rawRequest(collectorUrl, { path: `/t/${tag.tagId}.js`, host })).status).toBe(200);
      const sent = await postEvents(collectorUrl, host, { tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
      expect(sent.status).toBe(202);
      expect((await rawRequest(collectorUrl, { path: '/healthz' })).status).toBe(404);
      expect((await rawRequest(collectorUrl, { path: '/trpc/merchant.list' })).status).toBe(404);
    } finally {
      await other.close();
    }
  });
});

describe('GET /t/<tagId>.js', () => {
  let tag: GeneratedTag;
  let host: string;
  beforeAll(async () => {
    tag = await verifiedTag(server);
    host = `${tag.record.name}.${tag.domain}`;
  });

  it('is under 3 KB gzipped, with an ETag and cache headers, and answers 304 to If-None-Match', async () => {
    const gz = await rawRequest(server.url, {
      path: `/t/${tag.tagId}.js`,
      host,
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.body.length).toBeLessThan(3 * 1024);
    expect(gz.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(gz.headers['cache-control']).toMatch(/public, max-age=\d+/);
    expect(gz.headers.vary).toBe('Accept-Encoding');

    const plain = await rawRequest(server.url, { path: `/t/${tag.tagId}.js`, host });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gunzipSync(gz.body).toString('utf8')).toBe(plain.text);
    expect(plain.headers.etag).toBe(gz.headers.etag);

    const again = await rawRequest(server.url, {
      path: `/t/${tag.tagId}.js`,
      host,
      headers: { 'if-none-match': String(gz.headers.etag) },
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('answers brotli when asked for it first', async () => {
    const res = await rawRequest(server.url, {
      path: `/t/${tag.tagId}.js`,
      host,
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    expect(res.headers['content-encoding']).toBe('br');
    const identity = await rawRequest(server.url, {
      path: `/t/${tag.tagId}.js`,
      host,
      headers: { 'accept-encoding': 'br;q=0, gzip;q=0' },
    });
    expect(identity.headers['content-encoding']).toBeUndefined();
  });

  it('makes no request to any host but its own, and names no third party', async () => {
    const res = await rawRequest(server.url, { path: `/t/${tag.tagId}.js`, host });
    expect(res.text).not.toMatch(/https?:\/\//);
    expect(res.text).toContain("'/e'");
  });
});

describe('POST /e', () => {
  it('takes a sendBeacon text/plain body, sets the muid cookie and stores the events under that muid', async () => {
    const tag = await verifiedTag(server);
    const host = `${tag.record.name}.${tag.domain}`;
    const res = await postEvents(server.url, host, {
      tagId: tag.tagId,
      events: [{ id: 'e1', event_name: 'PageView', data: { path: '/' } }],
    });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ accepted: 1 });
    const cookie = res.headers['set-cookie']?.[0] ?? '';
    const muid = muidOf(res.headers['set-cookie']);
    expect(muid).toMatch(/^[0-9a-f-]{36}$/);
    expect(cookie).toContain(`Domain=${tag.domain}`);
    expect(cookie).toContain('Max-Age=31536000');
    expect(cookie).toContain('Path=/');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('HttpOnly');
    expect(cookie).not.toContain('Secure');

    // With the cookie: no new cookie, the same muid.
    const second = await postEvents(
      server.url,
      host,
      { tagId: tag.tagId, events: [{ id: 'e2', event_name: 'Purchase', data: { value: 12.5 } }] },
      { cookie: `other=1; muid=${muid}`, 'content-type': 'application/json' },
    );
    expect(second.status).toBe(202);
    expect(second.headers['set-cookie']).toBeUndefined();

    const events = await allEvents(server, tag.merchantId, { sortBy: 'event_name', sortOrder: 'asc' });
    expect(events).toEqual([
      expect.objectContaining({ id: 'e1', event_name: 'PageView', muid, raw_data: '{"path":"/"}' }),
      expect.objectContaining({ id: 'e2', event_name: 'Purchase', muid, raw_data: '{"value":12.5}' }),
    ]);
  });

  it('ignores X-Forwarded-Proto without TRUST_PROXY (no Secure); the cookie lives on the root domain', async () => {
    const tag = await preverifiedTag(server);
    const host = await collectorHostOf(server, tag);
    const res = await postEvents(
      server.url,
      host,
      { tagId: tag.tagId, events: [{ event_name: 'PageView' }] },
      { 'x-forwarded-proto': 'https' },
    );
    expect(res.status).toBe(202);
    // Secure behind a trusted TLS proxy: test/ops/trust-proxy.test.ts.
    expect(res.headers['set-cookie']?.[0]).not.toContain('Secure');
    // A preverified tag's cookie lives on the partner's root domain.
    expect(res.headers['set-cookie']?.[0]).toContain(`Domain=${server.partner.domain.split('.').slice(-2).join('.')}`);
  });

  it('replaces a malformed muid cookie with a fresh one', async () => {
    const tag = await preverifiedTag(server);
    const host = await collectorHostOf(server, tag);
    const res = await postEvents(
      server.url,
      host,
      { tagId: tag.tagId, events: [{ event_name: 'PageView' }] },
      { cookie: 'muid=<script>' },
    );
    expect(res.status).toBe(202);
    expect(muidOf(res.headers['set-cookie'])).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('allows CORS only from origins on the tag root domain, with credentials', async () => {
    const tag = await verifiedTag(server);
    const host = `${tag.record.name}.${tag.domain}`;
    const body = { tagId: tag.tagId, events: [{ event_name: 'PageView' }] };
    for (const origin of [`https://${tag.domain}`, `https://www.${tag.domain}`, `http://shop.${tag.domain}:8080`]) {
      const res = await postEvents(server.url, host, body, { origin });
      expect(res.status, origin).toBe(202);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(res.headers.vary).toContain('Origin');
    }
    const preflight = await rawRequest(server.url, {
      method: 'OPTIONS',
      path: '/e',
      host,
      headers: { origin: `https://www.${tag.domain}`, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-methods']).toBe('POST');
    expect(preflight.headers['access-control-allow-origin']).toBe(`https://www.${tag.domain}`);

    for (const origin of [
      'https://evil.example.com',
      `https://${tag.domain}.evil.com`,
      `https://x${tag.domain}`,
      'null',
    ]) {
      const res = await postEvents(server.url, host, body, { origin });
      expect(res.status, origin).toBe(403);
      expect(res.json).toEqual({ code: 'ACCESS_DENIED', message: expect.stringContaining('Origin') });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await rawRequest(server.url, { method: 'OPTIONS', path: '/e', host, headers: { origin } });
      expect(pre.status).toBe(403);
    }
    const stored = await allEvents(server, tag.merchantId);
    expect(stored).toHaveLength(3);
  });

  it('refuses a tag that is not live as POST /v1/collect does (409 TAG_NOT_LIVE)', async () => {
    const tag = await generateTag(server);
    const host = `${tag.record.name}.${tag.domain}`;
    const res = await postEvents(server.url, host, { tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ code: 'TAG_NOT_LIVE', message: expect.stringContaining('not live') });
    const viaApi = await api(server).post('/v1/collect', { tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
    expect(viaApi.status).toBe(409);
  });

  it("refuses another host's tag (404) and bad bodies (400, 413) with { message, code }", async () => {
    const tag = await verifiedTag(server);
    const other = await verifiedTag(server);
    const host = `${tag.record.name}.${tag.domain}`;
    const foreign = await postEvents(server.url, host, { tagId: other.tagId, events: [{ event_name: 'X' }] });
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe('TAG_NOT_FOUND');

    const cases: [unknown, number, string][] = [
      ['{not json', 400, 'VALIDATION_ERROR'],
      [{ tagId: tag.tagId, events: [] }, 400, 'VALIDATION_ERROR'],
      [{ tagId: 'nope', events: [{ event_name: 'X' }] }, 400, 'VALIDATION_ERROR'],
      [{ tagId: tag.tagId, events: [{ event_name: '' }] }, 400, 'VALIDATION_ERROR'],
      [{ tagId: tag.tagId, events: [{ event_name: 'x'.repeat(101) }] }, 400, 'VALIDATION_ERROR'],
      [{ tagId: tag.tagId, events: [{ event_name: 'a\u0000b' }] }, 400, 'VALIDATION_ERROR'],
      [`{"tagId":"${tag.tagId}","events":[{"event_name":"${'x'.repeat(1024 * 1024)}"}]}`, 413, 'PAYLOAD_TOO_LARGE'],
    ];
    for (const [body, status, code] of cases) {
      const res = await postEvents(server.url, host, body);
      expect(res.status).toBe(status);
      expect(res.json).toEqual({ code, message: expect.any(String) });
      expect(res.text).not.toMatch(/at .*\.ts|stack/i);
    }
    const form = await postEvents(server.url, host, 'a=b', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(form.json).toEqual({
      message: 'Content-Type must be application/json or text/plain',
      code: 'VALIDATION_ERROR',
    });
    // The tag always sends a type (text/plain, from fetch or sendBeacon with a string body): none is refused.
    const untyped = await rawRequest(server.url, { method: 'POST', path: '/e', host, body: '{}' });
    expect(untyped.status).toBe(415);
    expect((await rawRequest(server.url, { method: 'GET', path: '/e', host })).status).toBe(404);
  });

  it('stores a duplicate event id once, across /e and /v1/collect and within one batch', async () => {
    const tag = await preverifiedTag(server);
    const host = await collectorHostOf(server, tag);
    const events = [
      { id: 'dup-1', event_name: 'PageView' },
      { id: 'dup-1', event_name: 'PageView' },
      { id: 'dup-2', event_name: 'Purchase' },
    ];
    expect((await postEvents(server.url, host, { tagId: tag.tagId, events })).json).toEqual({ accepted: 3 });
    expect((await postEvents(server.url, host, { tagId: tag.tagId, events })).status).toBe(202);
    await collectOk(server, tag.tagId, events);
    const stored = await allEvents(server, tag.merchantId);
    expect(stored.map((e: { id: string }) => e.id).sort()).toEqual(['dup-1', 'dup-2']);
  });

  it("moves the events' times onto its own clock when the page's (sentAt) is off by over a minute", async () => {
    const tag = await preverifiedTag(server);
    const host = await collectorHostOf(server, tag);
    const iso = (ms: number) => new Date(ms).toISOString();
    // A page clock 3 hours ahead: a page view and its Engagement 40 s later, sent 50 s after the view.
    const ahead = 3 * 3_600_000;
    const viewed = Date.now() - 50_000;
    const off = await postEvents(server.url, host, {
      tagId: tag.tagId,
      sentAt: Date.now() + ahead,
      events: [
        { id: 'off-view', event_name: 'PageView', event_time: iso(viewed + ahead) },
        { id: 'off-engaged', event_name: 'Engagement', event_time: iso(viewed + ahead + 40_000) },
        { id: 'off-none', event_name: 'Purchase' },
      ],
    });
    expect(off.status).toBe(202);
    // 20 s off: within the bound, the page's times stand.
    const near = await postEvents(server.url, host, {
      tagId: tag.tagId,
      sentAt: Date.now() - 20_000,
      events: [{ id: 'near', event_name: 'PageView', event_time: '2026-01-01T00:00:00.000Z' }],
    });
    expect(near.status).toBe(202);
    const stored = new Map(
      (await allEvents(server, tag.merchantId)).map((e: { id: string; event_time: string }) => [
        e.id,
        Date.parse(e.event_time),
      ]),
    );
    const view = stored.get('off-view')!;
    expect(Math.abs(view - viewed)).toBeLessThan(2_000);
    expect(stored.get('off-engaged')! - view).toBe(40_000);
    expect(Math.abs(stored.get('off-none')! - Date.now())).toBeLessThan(10_000);
    expect(stored.get('near')).toBe(Date.parse('2026-01-01T00:00:00.000Z'));
  });
});

describe('tag lifecycle', () => {
  it('moves a waiting_for_events tag to active on its first event and keeps firstEventAt and lastEventAt', async () => {
    const tag = await verifiedTag(server);
    expect(await listedStatus(server, tag)).toBe('waiting_for_events');
    const host = `${tag.record.name}.${tag.domain}`;
    const before = Date.now();
    expect(
      (await postEvents(server.url, host, { tagId: tag.tagId, events: [{ event_name: 'PageView' }] })).status,
    ).toBe(202);
    expect(await listedStatus(server, tag)).toBe('active');
    const [row] = await server.app.deps.db.select().from(tags).where(eq(tags.id, tag.tagId));
    expect(row?.firstEventAt?.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(row?.lastEventAt?.getTime()).toBeGreaterThanOrEqual(row?.firstEventAt?.getTime() ?? 0);
    const first = row?.firstEventAt?.getTime();

    await collectOk(server, tag.tagId, [{ event_name: 'Purchase' }]);
    const [after] = await server.app.deps.db.select().from(tags).where(eq(tags.id, tag.tagId));
    expect(after?.status).toBe('active');
    expect(after?.firstEventAt?.getTime()).toBe(first);
  });

  it('moves a tag to active through POST /v1/collect too (the one ingestion path)', async () => {
    const tag = await verifiedTag(server);
    const [row] = await server.app.deps.db.select().from(tags).where(eq(tags.id, tag.tagId));
    expect(row?.firstEventAt).toBeNull();
    const res = await api(server).post('/v1/collect', { tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
    expect(res.status).toBe(202);
    expect(await listedStatus(server, tag)).toBe('active');
  });
});

describe('GET /v1/partners/tag/{tagId}/snippet', () => {
  it('answers the collector host, script URL and HTML snippet of a tag', async () => {
    const tag = await verifiedTag(server);
    const res = await api(server, server.partner.apiKey).get(`/v1/partners/tag/${tag.tagId}/snippet`);
    expect(res.status).toBe(200);
    const host = `${tag.record.name}.${tag.domain}`;
    expect(res.body).toEqual({
      tagId: tag.tagId,
      collectorHost: host,
      scriptUrl: `https://${host}/t/${tag.tagId}.js`,
      html: expect.stringContaining(`"https://${host}/t/${tag.tagId}.js"`),
    });
    expect(res.body.html).toMatch(/^<script>.*ptag\.q.*<\/script>$/s);
  });

  it('is 401 without a key, 404 for an unknown tag, 403 for another partner tag, 400 for a bad id', async () => {
    const tag = await verifiedTag(server);
    expect((await api(server).get(`/v1/partners/tag/${tag.tagId}/snippet`)).status).toBe(401);
    const missing = await api(server, server.partner.apiKey).get(`/v1/partners/tag/${randomUUID()}/snippet`);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('TAG_NOT_FOUND');
    const stranger = await server.createPartner('Stranger');
    const denied = await api(server, stranger.apiKey).get(`/v1/partners/tag/${tag.tagId}/snippet`);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ code: 'ACCESS_DENIED', message: expect.any(String) });
    expect(denied.text).not.toContain(tag.domain);
    const bad = await api(server, server.partner.apiKey).get('/v1/partners/tag/not-a-uuid/snippet');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await api(server).get('/openapi.json')).body;
    expect(doc.paths['/v1/partners/tag/{tagId}/snippet']?.get).toBeDefined();
  });
});
