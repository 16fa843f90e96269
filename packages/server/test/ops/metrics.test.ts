import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { generateTag } from '../helpers/fixtures.js';
import { parseMetrics, type Scrape } from '../helpers/prometheus.js';

const TOKEN = 'metrics-token-0123456789';

describe('GET /metrics (Prometheus text, parsed by a third-party parser)', () => {
  let server: TestServer;
  let plain: TestServer;
  const scrape = async (): Promise<Scrape> => {
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await res.text());
  };

  beforeAll(async () => {
    [server, plain] = await Promise.all([
      startTestServer({ env: { METRICS_TOKEN: TOKEN, METRICS_PORT: '0', COLLECT_RATE_LIMIT_PER_MINUTE: '4' } }),
      startTestServer(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), plain?.close()]);
  });

  it('is not public: 404 on the main port without METRICS_TOKEN, 401 without the token', async () => {
    expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
    expect(plain.app.metricsServer).toBeUndefined();
    const missing = await api(server).get('/metrics');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ message: expect.any(String), code: 'UNAUTHORIZED' });
    expect((await api(server).get('/metrics', { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
  });

  it('METRICS_PORT serves the same registry without a token, and nothing else', async () => {
    expect(server.app.metricsServer).toBeDefined();
    const port = (server.app.metricsServer!.address() as AddressInfo).port;
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    const scraped = parseMetrics(await res.text());
    expect(scraped.family('partner_tags_http_requests_total')?.type).toBe('COUNTER');
    expect((await fetch(`http://127.0.0.1:${port}/v1/partners/merchant`)).status).toBe(404);
  });

  it('counts requests by templated route and status, collector events, rate-limit rejections; gauges present', async () => {
    const key = server.partner.apiKey;
    const tag = await generateTag(server, { domain: `shop-${randomUUID().slice(0, 8)}.${server.partner.domain}` });
    const before = await scrape();
    const route = { route: '/v1/partners/merchant', method: 'GET', status: '200' };
    const snippet = { route: '/v1/partners/tag/{tagId}/snippet', method: 'GET', status: '404' };

    for (let i = 0; i < 3; i++) expect((await api(server, key).get('/v1/partners/merchant')).status).toBe(200);
    // Raw paths never become labels: two different ids, one templated series.
    for (let i = 0; i < 2; i++) {
      expect((await api(server, key).get(`/v1/partners/tag/${randomUUID()}/snippet`)).status).toBe(404);
    }
    const garbage = `/no-such-${randomUUID()}`;
    expect((await api(server).get(garbage)).status).toBe(404);
    // Collector: 2 accepted and stored, 1 event rejected (unknown tag), then over the per-address budget (4).
    const collect = (tagId: string, events: unknown[]) => api(server).post('/v1/collect', { tagId, events });
    expect((await collect(tag.tagId, [{ event_name: 'PageView' }, { event_name: 'Purchase' }])).status).toBe(202);
    expect((await collect(randomUUID(), [{ event_name: 'PageView' }])).status).toBe(404);
    expect((await collect(tag.tagId, [])).status).toBe(400);
    expect((await collect(tag.tagId, [{ event_name: 'PageView' }])).status).toBe(202);
    expect((await collect(tag.tagId, [{ event_name: 'PageView' }])).status).toBe(429);

    const after = await scrape();
    const moved = (name: string, labels?: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    expect(moved('partner_tags_http_requests_total', route)).toBe(3);
    expect(moved('partner_tags_http_request_duration_seconds', route)).toBe(3);
    expect(moved('partner_tags_http_requests_total', snippet)).toBe(2);
    expect(moved('partner_tags_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(moved('partner_tags_http_requests_total', { route: '/v1/collect', status: '429' })).toBe(1);
    expect(moved('partner_tags_collector_events_total', { outcome: 'accepted' })).toBe(3);
    expect(moved('partner_tags_collector_events_total', { outcome: 'stored' })).toBe(3);
    expect(moved('partner_tags_collector_events_total', { outcome: 'rejected' })).toBe(1);
    expect(moved('partner_tags_rate_limit_rejections_total', { scope: 'address' })).toBe(1);
    for (const family of after.families) {
      for (const sample of family.metrics) {
        for (const value of Object.values(sample.labels ?? {})) expect(value).not.toContain('no-such-');
      }
    }
    expect(after.family('partner_tags_ingest_queue_depth')?.type).toBe('GAUGE');
    expect(after.family('partner_tags_event_streams_open')?.type).toBe('GAUGE');
    expect(after.family('partner_tags_process_resident_memory_bytes')).toBeDefined();
    if (server.app.database.driver === 'postgres') {
      expect(after.family('partner_tags_db_pool_in_use')?.type).toBe('GAUGE');
      expect(after.family('partner_tags_db_pool_waiting')?.type).toBe('GAUGE');
    }
  });
});
