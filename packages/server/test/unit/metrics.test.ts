import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/kernel/metrics.js';
import { parseMetrics } from '../helpers/prometheus.js';

describe('metrics registry (one per app)', () => {
  it('keeps two apps in one process apart', async () => {
    const a = createMetrics({ processMetrics: false });
    const b = createMetrics({ processMetrics: false });
    a.ingest.events.inc({ outcome: 'accepted' }, 3);
    b.ingest.events.inc({ outcome: 'accepted' }, 1);
    const scrapeA = parseMetrics((await a.render()).body);
    const scrapeB = parseMetrics((await b.render()).body);
    expect(scrapeA.value('partner_tags_collector_events_total', { outcome: 'accepted' })).toBe(3);
    expect(scrapeB.value('partner_tags_collector_events_total', { outcome: 'accepted' })).toBe(1);
  });

  it('returns the registered metric for a known name and refuses another type', () => {
    const metrics = createMetrics({ processMetrics: false });
    const config = { name: 'partner_tags_test_total', help: 'test', labelNames: ['outcome'] as const };
    const first = metrics.counter(config);
    expect(metrics.counter(config)).toBe(first);
    expect(() => metrics.gauge({ name: 'partner_tags_test_total', help: 'test' })).toThrow(/another type/);
  });

  it('renders parseable text: counters, scrape-time gauges, histograms, zero series', async () => {
    const metrics = createMetrics();
    let depth = 7;
    metrics.gaugeOf('partner_tags_test_depth', 'a depth', () => depth);
    metrics.http.requests.inc({ route: 'GET /v1/partners/merchant', method: 'GET', status: '200' });
    metrics.http.duration.observe({ route: 'GET /v1/partners/merchant', method: 'GET', status: '200' }, 0.02);
    const rendered = await metrics.render();
    expect(rendered.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const scrape = parseMetrics(rendered.body);
    expect(scrape.value('partner_tags_test_depth')).toBe(7);
    expect(scrape.family('partner_tags_http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(scrape.value('partner_tags_http_request_duration_seconds', { route: 'GET /v1/partners/merchant' })).toBe(1);
    expect(scrape.value('partner_tags_http_requests_total', { status: '200' })).toBe(1);
    // Every scope exists from the start.
    expect(
      scrape
        .family('partner_tags_rate_limit_rejections_total')
        ?.metrics.map((m) => m.labels?.scope)
        .sort(),
    ).toEqual(['address', 'exports', 'key', 'streams', 'tag']);
    expect(scrape.family('partner_tags_process_resident_memory_bytes')).toBeDefined();
    depth = 9;
    expect(parseMetrics((await metrics.render()).body).value('partner_tags_test_depth')).toBe(9);
  });
});
