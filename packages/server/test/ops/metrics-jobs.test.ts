import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { deleteLogStream, NATS_URL, natsAnswers, natsPort, uniqueLogPrefix } from '../helpers/event-log.js';
import { collect, generateTag, preverifiedTag, publishCname } from '../helpers/fixtures.js';
import { createScratchDatabase, type ScratchDatabase, startTcpProxy, type TcpProxy } from '../helpers/hardening.js';
import { parseMetrics, type Scrape } from '../helpers/prometheus.js';

/**
 * Issue 17 item 6, the background work: webhook deliveries and the tag monitor's DNS checks by
 * outcome, and the log lag in log mode, each read from GET /metrics by a third-party Prometheus
 * text parser after real deliveries (a loopback receiver), real checks (the loopback DNS server)
 * and real publishes (NATS JetStream).
 */

const TOKEN = 'metrics-token-0123456789';

async function scrape(server: TestServer): Promise<Scrape> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}

/** Scrapes until `done` holds (at most `ms`), returning the last scrape. */
async function scrapeUntil(server: TestServer, done: (s: Scrape) => boolean, ms = 20_000): Promise<Scrape> {
  const deadline = Date.now() + ms;
  for (;;) {
    const scraped = await scrape(server);
    if (done(scraped) || Date.now() > deadline) return scraped;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('metrics of the background jobs: webhook deliveries and DNS checks by outcome', () => {
  let server: TestServer;
  let receiver: TestWebhookReceiver;
  let scratch: ScratchDatabase | undefined;
  beforeAll(async () => {
    // The jobs claim work from the whole database: on PostgreSQL a database of this file's own.
    if (process.env.TEST_DATABASE_URL) scratch = await createScratchDatabase('ops_metrics_jobs');
    server = await startTestServer({
      ...(scratch ? { databaseUrl: scratch.url } : {}),
      env: {
        METRICS_TOKEN: TOKEN,
        TAG_MONITOR: 'on',
        WEBHOOK_DELIVERY: 'on',
        TAG_RECHECK_SCHEDULE: '1s,1s',
        TAG_RECHECK_WINDOW: '1h',
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        // One retry: a delivery failing twice is `failed`.
        WEBHOOK_RETRY_SCHEDULE: '100ms',
        WEBHOOK_TIMEOUT_MS: '1000',
      },
      knobs: { webhookPollMs: 50 },
    });
    receiver = await startWebhookReceiver();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await scratch?.drop();
  });

  it('webhook retention runs beside the delivery worker: its counter is there from the start, by table', async () => {
    const family = (await scrape(server)).family('partner_tags_webhook_retention_deleted_total');
    expect(family?.metrics.map((m) => m.labels?.table).sort()).toEqual(['deliveries', 'endpoints', 'messages']);
  });

  it('webhook deliveries: succeeded, retried, failed move with real deliveries', async () => {
    const key = server.partner.apiKey;
    const before = await scrape(server);
    const name = 'partner_tags_webhook_deliveries_total';
    for (const outcome of ['succeeded', 'retried', 'failed']) {
      expect(before.family(name)?.metrics.some((m) => m.labels?.outcome === outcome)).toBe(true);
    }
    const created = await api(server, key).post('/v1/partners/webhooks', { url: receiver.url });
    expect(created.status).toBe(201);
    const webhookId = created.body.webhookId as string;
    // One delivery answered 200; then one answered 500 twice (a retry, then no attempt left).
    receiver.fallback = 200;
    expect((await api(server, key).post(`/v1/partners/webhooks/${webhookId}/test`, {})).status).toBeLessThan(300);
    await receiver.waitFor(1, 10_000);
    receiver.answer(500, 500);
    expect((await api(server, key).post(`/v1/partners/webhooks/${webhookId}/test`, {})).status).toBeLessThan(300);
    await receiver.waitFor(3, 10_000);
    const moved = (s: Scrape, outcome: string) => s.value(name, { outcome }) - before.value(name, { outcome });
    const after = await scrapeUntil(server, (s) => moved(s, 'failed') >= 1 && moved(s, 'succeeded') >= 1);
    expect(moved(after, 'succeeded')).toBe(1);
    expect(moved(after, 'retried')).toBe(1);
    expect(moved(after, 'failed')).toBe(1);
  }, 30_000);

  it('DNS checks of the tag monitor: a miss (RECORD_NOT_FOUND), then ok once the CNAME is published', async () => {
    const name = 'partner_tags_tag_monitor_checks_total';
    const before = await scrape(server);
    expect(before.family(name)?.type).toBe('COUNTER');
    const moved = (s: Scrape, outcome: string) => s.value(name, { outcome }) - before.value(name, { outcome });
    const tag = await generateTag(server);
    const missed = await scrapeUntil(server, (s) => moved(s, 'RECORD_NOT_FOUND') >= 1);
    expect(moved(missed, 'RECORD_NOT_FOUND')).toBeGreaterThanOrEqual(1);
    publishCname(server, tag);
    const found = await scrapeUntil(server, (s) => moved(s, 'ok') >= 1);
    expect(moved(found, 'ok')).toBe(1);
  }, 30_000);
});

const natsAvailable = await natsAnswers();

describe.skipIf(!natsAvailable)('metrics in log mode: the log lag, sampled from JetStream at scrape time', () => {
  const prefix = uniqueLogPrefix();
  let server: TestServer;
  beforeAll(async () => {
    // ROLE api: no writers in this process, so what the collectors publish stays pending.
    server = await startTestServer({
      env: { METRICS_TOKEN: TOKEN, EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix, ROLE: 'api' },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await deleteLogStream(prefix);
  });

  it('pending messages grow with every published request; the sample says it was read', async () => {
    const before = await scrape(server);
    expect(before.family('partner_tags_event_log_pending_messages')?.type).toBe('GAUGE');
    expect(before.value('partner_tags_event_log_lag_sampled')).toBe(1);
    const pendingBefore = before.value('partner_tags_event_log_pending_messages', { state: 'pending' });
    const tag = await preverifiedTag(server);
    for (let i = 0; i < 3; i++) {
      expect((await collect(server, tag.tagId, [{ event_name: 'PageView' }])).status).toBe(202);
    }
    const after = await scrape(server);
    expect(after.value('partner_tags_event_log_pending_messages', { state: 'pending' }) - pendingBefore).toBe(3);
    expect(after.value('partner_tags_event_log_pending_messages', { state: 'ack_pending' })).toBe(0);
    expect(after.value('partner_tags_event_log_lag_scrape_errors_total')).toBe(0);
  });
});

describe.skipIf(!natsAvailable)('metrics in log mode with writers: stored moves, the lag drains', () => {
  const prefix = uniqueLogPrefix();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { METRICS_TOKEN: TOKEN, EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix, ROLE: 'all' },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await deleteLogStream(prefix);
  });

  it('accepted at publish, stored once the writer committed, nothing left pending', async () => {
    const name = 'partner_tags_collector_events_total';
    const before = await scrape(server);
    const tag = await preverifiedTag(server);
    for (let i = 0; i < 3; i++) {
      expect((await collect(server, tag.tagId, [{ event_name: 'PageView' }, { event_name: 'Purchase' }])).status).toBe(
        202,
      );
    }
    const moved = (s: Scrape, outcome: string) => s.value(name, { outcome }) - before.value(name, { outcome });
    const after = await scrapeUntil(server, (s) => moved(s, 'stored') >= 6, 15_000);
    expect(moved(after, 'accepted')).toBe(6);
    expect(moved(after, 'stored')).toBe(6);
    const drained = await scrapeUntil(server, (s) => s.value('partner_tags_event_log_pending_messages') === 0, 15_000);
    expect(drained.value('partner_tags_event_log_pending_messages', { state: 'pending' })).toBe(0);
    expect(drained.value('partner_tags_event_log_pending_messages', { state: 'ack_pending' })).toBe(0);
    expect(drained.value('partner_tags_event_log_lag_sampled')).toBe(1);
  });
});

describe.skipIf(!natsAvailable)('metrics in log mode: NATS black-holed, the scrape still answers', () => {
  const prefix = uniqueLogPrefix();
  let server: TestServer;
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy(natsPort());
    server = await startTestServer({
      env: {
        METRICS_TOKEN: TOKEN,
        EVENT_LOG_URL: `nats://127.0.0.1:${proxy.port}`,
        EVENT_LOG_PREFIX: prefix,
        ROLE: 'api',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await proxy?.setMode('forward');
    await server?.close();
    await proxy?.close();
    await deleteLogStream(prefix);
  });

  it('answers within the 1 s lag deadline (plus margin): lag_sampled 0, a scrape error counted', async () => {
    expect((await scrape(server)).value('partner_tags_event_log_lag_sampled')).toBe(1);
    await proxy.setMode('blackhole');
    const started = performance.now();
    const scraped = await scrape(server);
    const ms = performance.now() - started;
    expect(scraped.value('partner_tags_event_log_lag_sampled')).toBe(0);
    expect(scraped.value('partner_tags_event_log_lag_scrape_errors_total')).toBe(1);
    expect(scraped.family('partner_tags_http_requests_total')?.type).toBe('COUNTER');
    expect(ms).toBeGreaterThan(900);
    expect(ms).toBeLessThan(2_000);
    console.info(`scrape with NATS black-holed: ${ms.toFixed(0)} ms`);
  });
});
