// The tag monitor (jobs/tag-monitor.ts) through the real HTTP transport, the loopback DNS server
// and the database of the run (PGlite, or PostgreSQL with TEST_DATABASE_URL), on a test schedule:
// re-checks 1s, 2s, 4s (then 4s until the window ends), health checks every 2 s.
import { and, asc, eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookMessages } from '../src/db/schema/index.js';
import {
  startTestServer,
  startWebhookReceiver,
  type TestServer,
  type TestWebhookReceiver,
} from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import { collectOk, type GeneratedTag, generateTag, publishCname } from './helpers/fixtures.js';

let server: TestServer;
let receiver: TestWebhookReceiver;
beforeAll(async () => {
  server = await startTestServer({
    env: {
      TAG_MONITOR: 'on',
      WEBHOOK_DELIVERY: 'on',
      TAG_RECHECK_SCHEDULE: '1s,2s,4s',
      TAG_HEALTH_INTERVAL: '2s',
      TAG_RECHECK_WINDOW: '1h',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms',
      WEBHOOK_TIMEOUT_MS: '1000',
    },
    knobs: { webhookPollMs: 50 },
  });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const getTag = async (tagId: string): Promise<Json> => {
  const res = await api(server, server.partner.apiKey).get(`/v1/partners/tag/${tagId}`);
  expect(res.status).toBe(200);
  return res.body;
};

/** Polls GET until `done` holds (the test schedule's checks run every 1-4 s), at most `timeoutMs`. */
async function waitForTag(tagId: string, done: (tag: Json) => boolean, timeoutMs = 20_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tag = await getTag(tagId);
    if (done(tag)) return tag;
    if (Date.now() > deadline) throw new Error(`tag ${tagId} never reached the state: ${JSON.stringify(tag)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The outbox messages of one tag, oldest first. */
async function messagesOf(tagId: string): Promise<Array<{ type: string; data: Json }>> {
  return server.app.database.db
    .select({ type: webhookMessages.type, data: webhookMessages.data })
    .from(webhookMessages)
    .where(
      and(eq(webhookMessages.partnerId, server.partner.partnerId), sql`${webhookMessages.data}->>'tagId' = ${tagId}`),
    )
    .orderBy(asc(webhookMessages.createdAt));
}

const recordHost = (tag: GeneratedTag) => `${tag.record.name}.${tag.domain}`;

async function verifiedByMonitor(): Promise<GeneratedTag> {
  const tag = await generateTag(server);
  publishCname(server, tag);
  await waitForTag(tag.tagId, (t) => t.isVerified);
  return tag;
}

describe('tag monitor: unverified tags are re-checked on the schedule', () => {
  it('verifies a tag whose CNAME appears after generate, with no verify call, and writes tag.verified', async () => {
    const tag = await generateTag(server);
    const fresh = await getTag(tag.tagId);
    expect(fresh.nextCheckAt).not.toBeNull();
    // The first re-check (1 s) finds nothing: the schedule moves on.
    const missed = await waitForTag(tag.tagId, (t) => t.lastCheck !== null);
    expect(missed).toMatchObject({
      status: 'inactive',
      isVerified: false,
      lastCheck: { ok: false, reason: 'RECORD_NOT_FOUND' },
    });
    expect(await messagesOf(tag.tagId)).toEqual([]);

    const published = Date.now();
    publishCname(server, tag);
    const verified = await waitForTag(tag.tagId, (t) => t.isVerified);
    const elapsed = Date.now() - published;
    console.log(`[measure] record published -> verified by the monitor: ${elapsed} ms (schedule 1s,2s,4s)`);
    expect(verified).toMatchObject({
      status: 'waiting_for_events',
      isConnected: true,
      isVerified: true,
      verifiedAt: expect.any(String),
      lastCheck: { ok: true },
    });
    // Exactly the effect of a verify: the health schedule takes over.
    expect(Date.parse(verified.nextCheckAt)).toBeGreaterThan(Date.parse(verified.lastCheck.checkedAt));
    const messages = await messagesOf(tag.tagId);
    expect(messages.map((m) => m.type)).toEqual(['tag.verified']);
    expect(messages[0]?.data).toMatchObject({ tagId: tag.tagId, status: 'waiting_for_events', isVerified: true });
    // The data is the tag as GET returns it (same keys, same record).
    expect(Object.keys(messages[0]?.data).sort()).toEqual(Object.keys(verified).sort());
    expect(messages[0]?.data.record).toEqual(verified.record);
    // The monitor counts its checks by outcome.
    const { body } = await server.app.deps.metrics.render();
    expect(body).toMatch(/partner_tags_tag_monitor_checks_total\{outcome="ok"\} [1-9]/);
    expect(body).toMatch(/partner_tags_tag_monitor_checks_total\{outcome="RECORD_NOT_FOUND"\} [1-9]/);
  });

  it('a resolver outage changes nothing: the tag stays as it was and is retried', async () => {
    const tag = await generateTag(server);
    server.dns.set(recordHost(tag), { kind: 'servfail' });
    const seen = await waitForTag(tag.tagId, (t) => t.lastCheck?.reason === 'RESOLVER_UNAVAILABLE');
    expect(seen).toMatchObject({ status: 'inactive', isConnected: false, isVerified: false });
    expect(seen.nextCheckAt).not.toBeNull();
    publishCname(server, tag);
    await waitForTag(tag.tagId, (t) => t.isVerified);
  });

  it('stops after the window and waits for a manual verify, which restarts the schedule', async () => {
    const tag = await generateTag(server);
    // As if generated 8 days ago with the window long over: the next claim finds it past its window.
    await server.app.database.db.execute(
      sql`update tags set recheck_until = now() - interval '1 second', next_check_at = now() where id = ${tag.tagId}::uuid`,
    );
    const stopped = await waitForTag(tag.tagId, (t) => t.nextCheckAt === null);
    expect(stopped.lastCheck).toMatchObject({ ok: false, reason: 'RECORD_NOT_FOUND' });
    const res = await api(server, server.partner.apiKey).post('/v1/partners/tag/verify', {
      tagId: tag.tagId,
      subdomain: tag.domain,
    });
    expect(res.status).toBe(422);
    const restarted = await getTag(tag.tagId);
    expect(restarted.nextCheckAt).not.toBeNull();
    publishCname(server, tag);
    await waitForTag(tag.tagId, (t) => t.isVerified);
  });
});

describe('tag monitor: verified tags are health-checked', () => {
  it('a removed record disconnects the tag (status and isVerified unchanged), a good check reconnects it', async () => {
    const tag = await verifiedByMonitor();
    server.dns.clear(recordHost(tag));
    const down = await waitForTag(tag.tagId, (t) => !t.isConnected);
    expect(down).toMatchObject({
      status: 'waiting_for_events',
      isVerified: true,
      isConnected: false,
      lastCheck: { ok: false, reason: 'RECORD_NOT_FOUND', found: [] },
    });
    expect((await messagesOf(tag.tagId)).map((m) => m.type)).toEqual(['tag.verified', 'tag.disconnected']);

    publishCname(server, tag);
    const up = await waitForTag(tag.tagId, (t) => t.isConnected);
    expect(up).toMatchObject({ status: 'waiting_for_events', isVerified: true, verifiedAt: down.verifiedAt });
    const messages = await messagesOf(tag.tagId);
    expect(messages.map((m) => m.type)).toEqual(['tag.verified', 'tag.disconnected', 'tag.reconnected']);
    expect(messages[1]?.data).toMatchObject({ isConnected: false, isVerified: true });
    expect(messages[2]?.data).toMatchObject({ isConnected: true });
  });

  it('a record pointing elsewhere disconnects too (WRONG_TARGET)', async () => {
    const tag = await verifiedByMonitor();
    publishCname(server, tag, 'elsewhere.example.net');
    const down = await waitForTag(tag.tagId, (t) => !t.isConnected);
    expect(down.lastCheck).toMatchObject({ reason: 'WRONG_TARGET' });
  });

  it('a resolver outage never disconnects a verified tag', async () => {
    const tag = await verifiedByMonitor();
    server.dns.set(recordHost(tag), { kind: 'servfail' });
    const after = await waitForTag(tag.tagId, (t) => t.lastCheck?.reason === 'RESOLVER_UNAVAILABLE');
    expect(after).toMatchObject({ isConnected: true, isVerified: true, status: 'waiting_for_events' });
    // Another outage check later: still connected, and no tag.disconnected was written.
    const firstOutage = after.lastCheck.checkedAt;
    const again = await waitForTag(
      tag.tagId,
      (t) => t.lastCheck?.reason === 'RESOLVER_UNAVAILABLE' && t.lastCheck.checkedAt !== firstOutage,
    );
    expect(again.isConnected).toBe(true);
    expect((await messagesOf(tag.tagId)).map((m) => m.type)).toEqual(['tag.verified']);
  });
});

describe('tag.activated', () => {
  it("a verified tag's first event makes it active and writes tag.activated once", async () => {
    const tag = await verifiedByMonitor();
    await collectOk(server, tag.tagId, [{ event_name: 'PageView' }]);
    await collectOk(server, tag.tagId, [{ event_name: 'PageView' }]);
    const live = await getTag(tag.tagId);
    expect(live).toMatchObject({ status: 'active', firstEventAt: expect.any(String) });
    const messages = await messagesOf(tag.tagId);
    expect(messages.map((m) => m.type)).toEqual(['tag.verified', 'tag.activated']);
    expect(messages[1]?.data).toMatchObject({ status: 'active', firstEventAt: live.firstEventAt });
  });
});

describe('tag webhooks are delivered, signed', () => {
  it('a receiver gets tag.verified, tag.activated, tag.disconnected, tag.reconnected for a tag, in order', async () => {
    const partner = await server.createPartner('Webhook partner');
    const client = api(server, partner.apiKey);
    const created = await client.post('/v1/partners/webhooks', { url: receiver.url });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;

    const tag = await generateTag(server, { key: partner.apiKey });
    publishCname(server, tag);
    const read = async () => (await client.get(`/v1/partners/tag/${tag.tagId}`)).body as Json;
    const until = async (done: (t: Json) => boolean) => {
      const end = Date.now() + 20_000;
      for (let t = await read(); ; t = await read()) {
        if (done(t)) return t;
        if (Date.now() > end) throw new Error(`tag never reached the state: ${JSON.stringify(t)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await until((t) => t.isVerified);
    await collectOk(server, tag.tagId, [{ event_name: 'PageView' }]);
    server.dns.clear(recordHost(tag));
    await until((t) => !t.isConnected);
    publishCname(server, tag);
    await until((t) => t.isConnected);

    const ofTag = () =>
      receiver.received.filter((r) => (JSON.parse(r.body) as { data: { tagId: string } }).data.tagId === tag.tagId);
    const end = Date.now() + 15_000;
    while (ofTag().length < 4 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
    const deliveries = ofTag();
    const verifier = new Webhook(secret);
    const events = deliveries.map((d) => verifier.verify(d.body, d.headers as Record<string, string>) as Json);
    expect(events.map((e) => e.type)).toEqual(['tag.verified', 'tag.activated', 'tag.disconnected', 'tag.reconnected']);
    expect(events[0].data).toMatchObject({ tagId: tag.tagId, isVerified: true, status: 'waiting_for_events' });
    expect(events[1].data).toMatchObject({ status: 'active', firstEventAt: expect.any(String) });
    expect(events[2].data).toMatchObject({
      isConnected: false,
      isVerified: true,
      lastCheck: { reason: 'RECORD_NOT_FOUND' },
    });
    expect(events[3].data).toMatchObject({ isConnected: true, lastCheck: { ok: true } });
  });
});
