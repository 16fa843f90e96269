// Retention through the SDK against the real server: merchants.update({ retentionDays }) and
// client.settings, their answers and their 400s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, PartnerClient } from '../src/index.js';
import { startRealServer, type TestServer } from './real-server.js';

let server: TestServer;
let client: PartnerClient;

beforeAll(async () => {
  server = await startRealServer();
  client = new PartnerClient({ apiKey: server.partner.apiKey, baseURL: server.url, maxRetries: 0 });
}, 120_000);
afterAll(() => server?.close());

describe('retention through the SDK', () => {
  it('merchants.update sets retentionDays; retrieve and list show it; null inherits', async () => {
    const { merchantId } = await client.merchants.create({ name: 'Kept 90 days' });
    const updated = await client.merchants.update(merchantId, { retentionDays: 90 });
    expect(updated).toMatchObject({ merchantId, name: 'Kept 90 days', retentionDays: 90 });
    expect((await client.merchants.retrieve(merchantId)).retentionDays).toBe(90);
    const listed: (number | null)[] = [];
    for await (const merchant of client.merchants.list({ limit: 100 })) {
      if (merchant.merchantId === merchantId) listed.push(merchant.retentionDays);
    }
    expect(listed).toEqual([90]);
    expect((await client.merchants.update(merchantId, { retentionDays: null })).retentionDays).toBeNull();
    const error = await client.merchants.update(merchantId, { retentionDays: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('settings.retrieve/update hold the partner default', async () => {
    expect(await client.settings.retrieve()).toEqual({
      defaultRetentionDays: null,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    expect(await client.settings.update({ defaultRetentionDays: 365 })).toEqual({
      defaultRetentionDays: 365,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    expect(await client.settings.retrieve()).toEqual({
      defaultRetentionDays: 365,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    const error = await client.settings.update({ defaultRetentionDays: 3651 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(await client.settings.update({ defaultRetentionDays: null })).toEqual({
      defaultRetentionDays: null,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
  });
});

describe('stats webhooks through the SDK', () => {
  it('settings switch them; merchants take a zone; triggerStats sends either in test mode', async () => {
    const settings = await client.settings.update({ statsDigest: true, statsSpike: { enabled: true, multiple: 2 } });
    expect(settings).toMatchObject({ statsDigest: true, statsSpike: { enabled: true, multiple: 2 } });
    expect(await client.settings.retrieve()).toMatchObject({ statsDigest: true });
    const low = await client.settings.update({ statsSpike: { multiple: 1 } }).catch((e: unknown) => e);
    expect(low).toBeInstanceOf(BadRequestError);

    const test = new PartnerClient({ apiKey: server.partner.testApiKey, baseURL: server.url, maxRetries: 0 });
    const { merchantId } = await test.merchants.create({ name: 'Zoned', timezone: 'asia/tokyo' });
    expect((await test.merchants.retrieve(merchantId)).timezone).toBe('Asia/Tokyo');
    const digest = await test.testHelpers.triggerStats(merchantId, { event: 'stats.digest' });
    expect(digest).toMatchObject({ type: 'stats.digest', deliveries: 0, data: { merchantId, timezone: 'Asia/Tokyo' } });
    const spike = await test.testHelpers.triggerStats(merchantId, { event: 'stats.spike' });
    expect(spike).toMatchObject({ type: 'stats.spike', data: { merchantId, visitors: 0, multiple: 3 } });
    const live = await client.testHelpers.triggerStats(merchantId, { event: 'stats.digest' }).catch((e: unknown) => e);
    expect(live).toMatchObject({ status: 403, code: 'TEST_MODE_ONLY' });
  });
});
