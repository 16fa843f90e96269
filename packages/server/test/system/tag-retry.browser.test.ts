// The tag script in a real Chromium re-sends a batch the collector answered 503 (log mode with the
// event log away: NATS behind a proxy of our own that the test cuts), with the same event ids,
// from localStorage across a page load, until it is accepted; and never throws into the page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { hasChromium, launchChromium, mapToLoopback } from '../helpers/chromium.js';
import { publishCname } from '../helpers/collector.js';
import { deleteLogStream, NATS_URL, natsAnswers, natsPort, uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import { generateTag, listEvents } from '../helpers/fixtures.js';
import { startTcpProxy, type TcpProxy } from '../helpers/hardening.js';

const MERCHANT_DOMAIN = 'retry-shop.com';
const natsUp = await natsAnswers();
if (!natsUp) console.warn(`tag retry browser test skipped: NATS does not answer at ${NATS_URL}`);

describe.skipIf(!hasChromium || !natsUp)('the tag re-sends after a 503', () => {
  const prefix = uniqueLogPrefix();
  let proxy: TcpProxy;
  let server: TestServer;
  let browser: Browser;
  let site: http.Server;
  let page = '';

  beforeAll(async () => {
    proxy = await startTcpProxy(natsPort());
    server = await startTestServer({
      env: { EVENT_LOG_URL: `nats://127.0.0.1:${proxy.port}`, EVENT_LOG_PREFIX: prefix },
    });
    browser = await launchChromium(mapToLoopback(MERCHANT_DOMAIN));
    site = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(page.replace('{{path}}', req.url ?? '/'));
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  }, 60_000);
  afterAll(async () => {
    if (natsUp) await deleteLogStream(prefix);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await server?.close();
    await proxy?.close();
  });

  it('keeps a batch answered 503 across a page load and re-sends it with the same ids once the collector accepts', async () => {
    const tag = await generateTag(server, { domain: MERCHANT_DOMAIN });
    publishCname(server, tag);
    const verified = await api(server, server.partner.apiKey).post('/v1/partners/tag/verify', {
      tagId: tag.tagId,
      subdomain: `www.${MERCHANT_DOMAIN}`,
    });
    expect(verified.status).toBe(200);
    const snippet = (await api(server, server.partner.apiKey).get(`/v1/partners/tag/${tag.tagId}/snippet`)).body;
    const collectorHost = `${tag.record.name}.${MERCHANT_DOMAIN}`;
    const html = (snippet.html as string).replace(
      `https://${collectorHost}`,
      `http://${collectorHost}:${new URL(server.url).port}`,
    );
    page = `<!doctype html><html><head><title>Shop {{path}}</title>\n${html}\n</head><body>Shop</body></html>`;

    const context = await browser.newContext();
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    const sent: { ids: string[]; names: string[]; page: string }[] = [];
    const statuses: number[] = [];
    tab.on('request', (request) => {
      if (new URL(request.url()).pathname !== '/e' || request.method() !== 'POST') return;
      const body = JSON.parse(request.postData() ?? '{}') as { events?: { id: string; event_name: string }[] };
      sent.push({
        ids: (body.events ?? []).map((e) => e.id),
        names: (body.events ?? []).map((e) => e.event_name),
        page: new URL(tab.url()).pathname,
      });
    });
    tab.on('response', (response) => {
      if (new URL(response.url()).pathname === '/e' && response.request().method() === 'POST') {
        statuses.push(response.status());
      }
    });
    const siteUrl = `http://${MERCHANT_DOMAIN}:${(site.address() as AddressInfo).port}`;

    // The event log goes away: the collector answers 503 with Retry-After.
    await proxy.setMode('refuse');
    proxy.cutAll();
    await tab.goto(`${siteUrl}/first`);
    await waitFor(() => statuses.includes(503), 15_000, 'a 503 from the collector');
    const firstIds = sent[0]!.ids;
    expect(sent[0]!.names).toEqual(['PageView']);

    // The next page load re-sends the kept events (from localStorage) with the same ids, in its
    // first batch, after the first page's Engagement (sent by its pagehide, kept too).
    await tab.goto(`${siteUrl}/second`);
    await waitFor(
      () => sent.some((s) => s.page === '/second' && s.ids.includes(firstIds[0]!)),
      15_000,
      'the kept batch re-sent by the next page',
    );

    // The log is back: the tag's next re-send is accepted, and each event is stored once.
    await proxy.setMode('forward');
    const stored = async () =>
      (await listEvents(server, tag.merchantId, { limit: 100, sortOrder: 'asc' })).body.events as Json[];
    await waitFor(async () => (await stored()).length >= 3, 30_000, 'both page views stored');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = await stored();
    expect(events.map((e) => e.event_name).sort()).toEqual(['Engagement', 'PageView', 'PageView']);
    expect(events.map((e) => e.id)).toContain(firstIds[0]);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    expect(statuses).toContain(202);
    // Every send of the first page's events carried the same ids, first in the batch.
    const resends = sent.filter((s) => s.ids.includes(firstIds[0]!));
    expect(resends.length).toBeGreaterThanOrEqual(2);
    for (const s of resends) expect(s.ids.slice(0, firstIds.length)).toEqual(firstIds);
    // Nothing is left waiting in localStorage, and the page saw no error.
    await waitFor(
      async () => (await tab.evaluate(`localStorage.getItem('ptag:${tag.tagId}')`)) === null,
      15_000,
      'the kept batches to clear',
    );
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
