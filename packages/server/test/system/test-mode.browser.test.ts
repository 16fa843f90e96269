import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { hasChromium, launchChromium, mapToLoopback } from '../helpers/chromium.js';
import { generateTag, listEvents } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';

// Test mode's tags are real tags (docs/decisions/test-mode.md): a test tag on a custom domain,
// verified without DNS, collects a real Chromium page's events into test data, which the test key
// reads and the live key does not reach.
const MERCHANT_DOMAIN = 'test-shop-example.com';
describe.skipIf(!hasChromium)('a test-mode tag in a real Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let merchantSite: http.Server;
  let page = '';

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchChromium(mapToLoopback(MERCHANT_DOMAIN));
    merchantSite = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(page);
    });
    await new Promise<void>((resolve) => merchantSite.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => merchantSite?.close(resolve));
    await server?.close();
  });

  it('collects PageView and a tracked Purchase into test data, activating the tag', async () => {
    const key = server.partner.testApiKey;
    const tag = await generateTag(server, { key, domain: MERCHANT_DOMAIN });
    // No record published: test mode verifies the domain without asking DNS.
    const verified = await api(server, key).post('/v1/partners/tag/verify', {
      tagId: tag.tagId,
      subdomain: MERCHANT_DOMAIN,
    });
    expect(verified.status).toBe(200);

    const snippet = (await api(server, key).get(`/v1/partners/tag/${tag.tagId}/snippet`)).body;
    const collectorHost = `${tag.record.name}.${MERCHANT_DOMAIN}`;
    expect(snippet.collectorHost).toBe(collectorHost);
    const collectorOrigin = `http://${collectorHost}:${new URL(server.url).port}`;
    page = [
      '<!doctype html><html><head><title>Test shop</title>',
      (snippet.html as string).replace(`https://${collectorHost}`, collectorOrigin),
      "<script>ptag('track', 'Purchase', { value: 9.5, currency: 'EUR' });</script>",
      '</head><body><h1>Test shop</h1></body></html>',
    ].join('\n');

    const context = await browser.newContext();
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(`http://${MERCHANT_DOMAIN}:${(merchantSite.address() as AddressInfo).port}/checkout`);

    const events = await until('the page events', async () => {
      const list = (await listEvents(server, tag.merchantId, { limit: 100 }, key)).body.events as Json[];
      return list.length >= 2 ? list : undefined;
    });
    expect(events.map((e) => e.event_name).sort()).toEqual(['PageView', 'Purchase']);
    expect(JSON.parse(events.find((e) => e.event_name === 'Purchase')!.raw_data)).toEqual({
      value: 9.5,
      currency: 'EUR',
    });
    expect(errors).toEqual([]);

    const got = await until('the tag activated', async () => {
      const res = await api(server, key).get(`/v1/partners/tag/${tag.tagId}`);
      return res.body.status === 'active' ? res.body : undefined;
    });
    expect(got).toMatchObject({ livemode: false, firstEventAt: expect.any(String) });

    // The live key reaches none of it.
    const live = api(server, server.partner.apiKey);
    expect((await listEvents(server, tag.merchantId, {}, server.partner.apiKey)).status).toBe(404);
    expect((await live.get(`/v1/partners/tag/${tag.tagId}`)).status).toBe(404);
    const today = new Date().toISOString().slice(0, 10);
    const summary = await live.get(
      `/v1/partners/stats/summary?merchantId=${tag.merchantId}&startDate=${today}&endDate=${today}`,
    );
    expect(summary.body.code).toBe('MERCHANT_NOT_FOUND');
    const own = await api(server, key).get(
      `/v1/partners/stats/summary?merchantId=${tag.merchantId}&startDate=${today}&endDate=${today}`,
    );
    expect(own.body.totals).toMatchObject({ events: 2, pageviews: 1, purchases: 1 });
    await context.close();
  });
});
