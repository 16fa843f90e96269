// Issue 30: webhook host names were resolved with dns.lookup (getaddrinfo on libuv's four-thread
// pool, not cancellable: a timeout only stopped waiting, the thread stayed blocked) and outside
// DNS_SERVERS. Now they go through the app's WebhookHostResolver: c-ares A/AAAA queries to
// DNS_SERVERS, cancelled at DNS_TIMEOUT_MS, at most WEBHOOK_DNS_CONCURRENCY in flight (as many
// waiting, the rest refused with 503), and the send-time check still connects to the address it
// checked. Everything here goes through the real HTTP API, the loopback DNS server and a real
// webhook receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { api } from '../helpers/api.js';

const BUDGET_MS = 3000;
let strict: TestServer;
let strictClosed = false;
let open: TestServer | undefined;
let receiver: TestWebhookReceiver;

beforeAll(async () => {
  // Production rules, one lookup at a time, a budget the loaded CI machine keeps to.
  strict = await startTestServer({
    env: {
      WEBHOOK_DNS_CONCURRENCY: '1',
      DNS_TIMEOUT_MS: String(BUDGET_MS),
      WEBHOOK_DELIVERY: 'on',
      WEBHOOK_RETRY_SCHEDULE: '1h',
    },
    knobs: { webhookPollMs: 50 },
  });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  if (!strictClosed) await strict?.close();
  await open?.close();
  await receiver?.close();
});

const port = () => new URL(receiver.url).port;
const openServer = () => open as TestServer;

async function firstAttempt(server: TestServer, webhookId: string): Promise<Record<string, unknown>> {
  const client = api(server, server.partner.apiKey);
  for (let i = 0; i < 200; i++) {
    const [delivery] = (await client.get(`/v1/partners/webhooks/${webhookId}/deliveries`)).body.deliveries;
    if (delivery?.attempts > 0) return delivery;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no attempt recorded');
}

describe('webhook host lookups', () => {
  it('the create-time check asks DNS_SERVERS: a name that resolves to a private address is refused', async () => {
    strict.dns.set('hooks-private.partner-example.com', { kind: 'a', address: '10.0.0.5' });
    const res = await api(strict, strict.partner.apiKey).post('/v1/partners/webhooks', {
      url: 'https://hooks-private.partner-example.com/hook',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toMatch(/hooks-private\.partner-example\.com resolves to a private address/);
    // The address itself is not named: the server's view of a name is not the partner's to read.
    expect(res.text).not.toContain('10.0.0.5');
    expect(strict.dns.queries).toContain('hooks-private.partner-example.com');
  });

  it('a lookup DNS never answers is cancelled at DNS_TIMEOUT_MS and gives its slot back', async () => {
    strict.dns.set('silent.partner-example.com', { kind: 'drop' });
    const started = Date.now();
    const res = await api(strict, strict.partner.apiKey).post('/v1/partners/webhooks', {
      url: 'https://silent.partner-example.com/hook',
    });
    // Unresolved names are accepted (every send checks again), within the lookup's budget.
    expect(res.status).toBe(201);
    const ms = Date.now() - started;
    expect(ms).toBeGreaterThanOrEqual(BUDGET_MS - 100);
    expect(ms).toBeLessThan(BUDGET_MS + 3000);
    expect(strict.app.deps.webhookResolver.inFlight).toBe(0);
  });

  it('lookups in flight are bounded: beyond one running and one waiting, creates are refused with 503', async () => {
    strict.dns.set('*.slow.partner-example.com', { kind: 'drop' });
    const client = api(strict, strict.partner.apiKey);
    const answers = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const started = Date.now();
        const res = await client.post('/v1/partners/webhooks', { url: `https://h${i}.slow.partner-example.com/hook` });
        return { res, ms: Date.now() - started };
      }),
    );
    const busy = answers.filter((a) => a.res.status === 503).sort((a, b) => a.ms - b.ms);
    const admitted = answers.filter((a) => a.res.status === 201);
    expect(busy.length).toBeGreaterThanOrEqual(4);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    const slowestAdmitted = Math.max(...admitted.map((a) => a.ms));
    for (const { res, ms } of busy.slice(0, 4)) {
      expect(res.body).toEqual({ message: expect.stringMatching(/retry shortly/), code: 'SERVICE_UNAVAILABLE' });
      expect(res.headers.get('retry-after')).toBe('1');
      // Refused at once, not after a lookup (the admitted one waits out the whole budget).
      expect(ms).toBeLessThan(slowestAdmitted);
    }
    expect(slowestAdmitted).toBeGreaterThanOrEqual(BUDGET_MS - 100);
    // Only the admitted lookups reached DNS.
    const asked = new Set(strict.dns.queries.filter((name) => name.endsWith('.slow.partner-example.com')));
    expect(asked.size).toBeLessThanOrEqual(2);
    expect(strict.app.deps.webhookResolver.inFlight).toBe(0);
    // And the next create gets a slot again.
    strict.dns.set('after.partner-example.com', { kind: 'a', address: '93.184.215.14' });
    expect((await client.post('/v1/partners/webhooks', { url: 'https://after.partner-example.com/hook' })).status).toBe(
      201,
    );
  });

  it('send time: a name that now resolves to loopback is refused, and the receiver is never called', async () => {
    strict.dns.set('rebind.partner-example.com', { kind: 'a', address: '127.0.0.1' });
    // Stored directly, as if it had resolved publicly at create time and rebinds now.
    const [row] = await strict.app.deps.db
      .insert(webhookEndpoints)
      .values({
        partnerId: strict.partner.partnerId,
        url: `https://rebind.partner-example.com:${port()}/hook`,
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      })
      .returning({ id: webhookEndpoints.id });
    const before = receiver.received.length;
    const test = await api(strict, strict.partner.apiKey).post(`/v1/partners/webhooks/${row!.id}/test`, {});
    expect(test.status).toBe(202);
    const delivery = await firstAttempt(strict, row!.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
    expect(delivery.lastError).toBe('blocked_address');
    expect(receiver.received.length).toBe(before);
  });
});

describe('webhook host lookups with WEBHOOK_ALLOW_PRIVATE_URLS', () => {
  beforeAll(async () => {
    // On PostgreSQL the servers of a file share a database: the strict server's worker would claim
    // (and refuse) this delivery, so it stops first.
    await strict.close();
    strictClosed = true;
    // Private targets allowed: a name that resolves to the loopback receiver is delivered to.
    open = await startTestServer({
      env: {
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_DELIVERY: 'on',
        WEBHOOK_RETRY_SCHEDULE: '1h',
      },
      knobs: { webhookPollMs: 50 },
    });
  });

  it('send time: the connection goes to the address the resolver returned (DNS_SERVERS, not the hosts file)', async () => {
    const server = openServer();
    server.dns.set('pinned.partner-example.com', { kind: 'a', address: '127.0.0.1' });
    const client = api(server, server.partner.apiKey);
    const created = await client.post('/v1/partners/webhooks', {
      url: `http://pinned.partner-example.com:${port()}/hook`,
      events: ['webhook.test'],
    });
    expect(created.status).toBe(201);
    const before = receiver.received.length;
    expect((await client.post(`/v1/partners/webhooks/${created.body.webhookId}/test`, {})).status).toBe(202);
    const [request] = (await receiver.waitFor(before + 1)).slice(before);
    expect(request?.headers.host).toBe(`pinned.partner-example.com:${port()}`);
    expect(server.dns.queries).toContain('pinned.partner-example.com');
    expect(await firstAttempt(server, created.body.webhookId)).toMatchObject({ status: 'succeeded', lastError: null });
  });
});
