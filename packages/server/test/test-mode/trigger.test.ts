import { spawn } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SERVER_DIR,
  startTestServer,
  startWebhookReceiver,
  TEST_TARGET_HOST,
  type TestServer,
  type TestWebhookReceiver,
} from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { createMerchant, generateTag, MISSING_ID, uniqueDomain } from '../helpers/fixtures.js';

// The test-mode trigger (POST /v1/partners/test/tags/{tagId}/trigger): each state's real webhook,
// through the outbox and the delivery worker, to a real receiver on loopback, verified with the
// `standardwebhooks` library; a live key refused; the live endpoints of the same partner get nothing.
let server: TestServer;
let testReceiver: TestWebhookReceiver;
let liveReceiver: TestWebhookReceiver;
let testSecret: string;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      WEBHOOK_DELIVERY: 'on',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
    },
    knobs: { webhookPollMs: 50 },
  });
  testReceiver = await startWebhookReceiver();
  liveReceiver = await startWebhookReceiver();
  const created = await api(server, server.partner.testApiKey).post('/v1/partners/webhooks', { url: testReceiver.url });
  expect(created.status).toBe(201);
  expect(created.body.livemode).toBe(false);
  testSecret = created.body.secret;
  const live = await api(server, server.partner.apiKey).post('/v1/partners/webhooks', { url: liveReceiver.url });
  expect(live.body.livemode).toBe(true);
});
afterAll(async () => {
  await server?.close();
  await testReceiver?.close();
  await liveReceiver?.close();
});

const trigger = (key: string, tagId: string, event: string) =>
  api(server, key).post(`/v1/partners/test/tags/${tagId}/trigger`, { event });

/** Webhooks of the test receiver read so far (one may arrive before the test asks for it). */
let consumed = 0;

/** The next webhook the test receiver gets, verified with the endpoint's secret (Standard Webhooks). */
async function nextWebhook(): Promise<Json> {
  consumed += 1;
  const received = (await testReceiver.waitFor(consumed, 10_000))[consumed - 1]!;
  return new Webhook(testSecret).verify(received.body, received.headers as Record<string, string>);
}

async function verifiedTestTag() {
  const tag = await generateTag(server, { key: server.partner.testApiKey });
  const res = await api(server, server.partner.testApiKey).post('/v1/partners/tag/verify', {
    tagId: tag.tagId,
    subdomain: tag.domain,
  });
  expect(res.status).toBe(200);
  const verified = await nextWebhook();
  expect(verified).toMatchObject({
    type: 'tag.verified',
    livemode: false,
    data: { tagId: tag.tagId, livemode: false },
  });
  return tag;
}

describe('test mode: triggered tag states, each with its real webhook', () => {
  it('disconnected, reconnected, activated: the tag changes and each webhook arrives signed, livemode false', async () => {
    const tag = await verifiedTestTag();
    const key = server.partner.testApiKey;

    const down = await trigger(key, tag.tagId, 'tag.disconnected');
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ tagId: tag.tagId, livemode: false, isConnected: false, isVerified: true });
    expect(down.body.lastCheck).toMatchObject({ ok: false, reason: 'RECORD_NOT_FOUND' });
    const disconnected = await nextWebhook();
    expect(disconnected).toEqual({
      type: 'tag.disconnected',
      timestamp: expect.any(String),
      livemode: false,
      data: { ...down.body },
    });

    const up = await trigger(key, tag.tagId, 'tag.reconnected');
    expect(up.body).toMatchObject({ isConnected: true, status: 'waiting_for_events', lastCheck: { ok: true } });
    expect(await nextWebhook()).toMatchObject({ type: 'tag.reconnected', livemode: false, data: { ...up.body } });

    const first = await trigger(key, tag.tagId, 'tag.activated');
    expect(first.body).toMatchObject({ status: 'active', firstEventAt: expect.any(String) });
    expect(await nextWebhook()).toMatchObject({ type: 'tag.activated', livemode: false, data: { ...first.body } });

    // The partner's live endpoint got none of it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(liveReceiver.received).toEqual([]);
  });

  it('a preverified test tag activates on trigger', async () => {
    const tag = await generateTag(server, { key: server.partner.testApiKey, domain: `shop.${server.partner.domain}` });
    const res = await trigger(server.partner.testApiKey, tag.tagId, 'tag.activated');
    expect(res.status).toBe(200);
    expect(await nextWebhook()).toMatchObject({ type: 'tag.activated', data: { tagId: tag.tagId, livemode: false } });
  });

  it('a live key gets 403 TEST_MODE_ONLY, on its own live tag and on a test tag alike', async () => {
    const live = await generateTag(server, { key: server.partner.apiKey });
    const test = await generateTag(server, { key: server.partner.testApiKey });
    for (const tagId of [live.tagId, test.tagId, MISSING_ID]) {
      const res = await trigger(server.partner.apiKey, tagId, 'tag.disconnected');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 'TEST_MODE_ONLY', message: expect.stringContaining('mp_test_') });
    }
  });

  it('states an event cannot follow: 409 TAG_STATE_CONFLICT naming why; unknown events 400; other tags 404/403', async () => {
    const key = server.partner.testApiKey;
    const unverified = await generateTag(server, { key });
    for (const event of ['tag.disconnected', 'tag.reconnected', 'tag.activated']) {
      const res = await trigger(key, unverified.tagId, event);
      expect(res.status, event).toBe(409);
      expect(res.body).toEqual({ code: 'TAG_STATE_CONFLICT', message: expect.stringContaining('verify it first') });
    }
    const preverified = await generateTag(server, { key, domain: server.partner.domain });
    expect((await trigger(key, preverified.tagId, 'tag.disconnected')).body.code).toBe('TAG_STATE_CONFLICT');
    const tag = await verifiedTestTag();
    expect((await trigger(key, tag.tagId, 'tag.reconnected')).body.message).toContain('connected');
    expect((await trigger(key, tag.tagId, 'tag.verified')).status).toBe(400);
    expect((await trigger(key, 'not-a-uuid', 'tag.activated')).status).toBe(400);
    expect((await trigger(key, MISSING_ID, 'tag.activated')).body.code).toBe('TAG_NOT_FOUND');
    // Another partner's test key: as any tag of another partner.
    const other = await server.createPartner('Other');
    expect((await trigger(other.testApiKey, tag.tagId, 'tag.disconnected')).status).toBe(403);
    expect((await trigger(other.testApiKey, tag.tagId, 'tag.disconnected')).body.code).toBe('ACCESS_DENIED');
  });
});

/** `pnpm partner <args>` (the CLI's sources) on the server's own PostgreSQL database. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: SERVER_DIR,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: process.env.TEST_DATABASE_URL ?? '',
        TAG_TARGET_HOST: TEST_TARGET_HOST,
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The CLI opens the database itself: the embedded one is the test process's own, so PostgreSQL only.
describe.skipIf(!process.env.TEST_DATABASE_URL)('pnpm partner: test keys and trigger', () => {
  it('onboard prints both keys; rotate and revoke take --mode; trigger sends the webhook', async () => {
    const onboarded = await cli(['onboard', '--name', 'Cli Co', '--domain', uniqueDomain('cli', 'example'), '--json']);
    expect(onboarded.code, onboarded.stderr).toBe(0);
    const partner = JSON.parse(onboarded.stdout);
    expect(Object.keys(partner).sort()).toEqual(['apiKey', 'partnerId', 'record', 'testApiKey']);
    expect(partner.apiKey).toMatch(/^mp_live_/);
    expect(partner.testApiKey).toMatch(/^mp_test_/);
    // The test key works, and sees test data only.
    const merchantId = await createMerchant(server, partner.testApiKey);
    expect((await api(server, partner.apiKey).get(`/v1/partners/merchant/${merchantId}`)).status).toBe(404);

    const rotated = await cli(['rotate-key', partner.partnerId, '--mode', 'test', '--expire-old-in', '0', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const { apiKey: newTestKey } = JSON.parse(rotated.stdout);
    expect(newTestKey).toMatch(/^mp_test_/);
    expect((await api(server, partner.testApiKey).get('/v1/partners/merchant')).status).toBe(401);
    expect((await api(server, newTestKey).get(`/v1/partners/merchant/${merchantId}`)).body.livemode).toBe(false);
    expect((await api(server, partner.apiKey).get('/v1/partners/merchant')).status).toBe(200);

    const listed = JSON.parse((await cli(['list', '--json'])).stdout);
    const mine = listed.find((p: Json) => p.partnerId === partner.partnerId);
    expect(mine.keys.map((k: Json) => k.mode).sort()).toEqual(['live', 'test', 'test']);
    expect(listed.some((p: Json) => p.partnerId === mine.testPartnerId)).toBe(false);

    // trigger: a test tag of the server's partner, delivered by the running server.
    const tag = await verifiedTestTag();
    const triggered = await cli(['trigger', 'tag.disconnected', '--tag', tag.tagId, '--json']);
    expect(triggered.code, triggered.stderr).toBe(0);
    expect(JSON.parse(triggered.stdout)).toMatchObject({ tagId: tag.tagId, isConnected: false, livemode: false });
    expect(await nextWebhook()).toMatchObject({
      type: 'tag.disconnected',
      livemode: false,
      data: { tagId: tag.tagId },
    });
    const live = await generateTag(server, { key: server.partner.apiKey });
    const refused = await cli(['trigger', 'tag.activated', '--tag', live.tagId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('mp_test_');

    const revoked = await cli(['revoke-key', partner.partnerId, '--mode', 'test', '--json']);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ mode: 'test', revoked: 1 });
    expect((await api(server, newTestKey).get('/v1/partners/merchant')).status).toBe(401);
    expect((await api(server, partner.apiKey).get('/v1/partners/merchant')).status).toBe(200);
  }, 180_000);
});
