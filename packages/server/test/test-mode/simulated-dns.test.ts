import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { type ApiResponse, api, type Json } from '../helpers/api.js';
import { createMerchant, type GeneratedTag, generateTag, uniqueDomain } from '../helpers/fixtures.js';

// Test mode's verification asks no DNS: the domain's first label decides (docs/decisions/test-mode.md).
// Each simulated outcome is held to the live one: the same domain, verified by the live key against a
// real (loopback) DNS server holding the zone the simulation stands for, answers the same status, code,
// message and details, names of the tag's own record aside.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const recordHost = (tag: GeneratedTag) => `${tag.record.name}.${tag.domain}`;

/** The zone each suffix simulates, published for a live tag in the loopback DNS server. */
const LIVE_ZONES: Record<string, (server: TestServer, tag: GeneratedTag) => void> = {
  'record-not-found': () => {},
  'wrong-target': (s, tag) => s.dns.setCname(recordHost(tag), 'elsewhere.example.net'),
  'not-a-cname': (s, tag) => s.dns.set(recordHost(tag), { kind: 'a', address: '192.0.2.10' }),
  'wildcard-record': (s, tag) => s.dns.setCname(`*.${tag.domain}`, tag.record.value),
  'cname-chain-too-long': (s, tag) => {
    s.dns.setCname(recordHost(tag), `loop.${tag.domain}`);
    s.dns.setCname(`loop.${tag.domain}`, recordHost(tag));
  },
  'resolver-unavailable': (s, tag) => s.dns.set(`*.${tag.domain}`, { kind: 'servfail' }),
};

/** The answer with the tag's own names (record label, target label, probe name) and the time taken out. */
function normalized(res: ApiResponse, tag: GeneratedTag): Json {
  const text = res.text
    .replaceAll(tag.record.name, '<record>')
    .replaceAll(tag.record.value, '<target>')
    .replace(/pt-probe-[a-z0-9]+/g, '<probe>');
  const body = JSON.parse(text);
  if (body.details) body.details.checkedAt = '<checkedAt>';
  return { status: res.status, body };
}

async function verify(key: string, tag: GeneratedTag): Promise<ApiResponse> {
  return api(server, key).post('/v1/partners/tag/verify', { tagId: tag.tagId, subdomain: tag.domain });
}

describe('test mode: simulated DNS outcomes equal the live ones', () => {
  it.each([
    ['record-not-found', 422, 'VALIDATION_ERROR', 'RECORD_NOT_FOUND'],
    ['wrong-target', 422, 'VALIDATION_ERROR', 'WRONG_TARGET'],
    ['not-a-cname', 422, 'VALIDATION_ERROR', 'NOT_A_CNAME'],
    ['wildcard-record', 422, 'VALIDATION_ERROR', 'WILDCARD_RECORD'],
    ['cname-chain-too-long', 422, 'VALIDATION_ERROR', 'CNAME_CHAIN_TOO_LONG'],
    ['resolver-unavailable', 503, 'EXTERNAL_SERVICE_ERROR', 'RESOLVER_UNAVAILABLE'],
  ])('shop-…-%s.com: %i %s, reason %s, as a live zone answers', async (suffix, status, code, reason) => {
    const domain = uniqueDomain(`shop-${suffix.length}`).replace('.com', `-${suffix}.com`);
    const { partner } = server;
    const testTag = await generateTag(server, { key: partner.testApiKey, domain });
    const liveTag = await generateTag(server, { key: partner.apiKey, domain });
    const queriesBefore = server.dns.queries.length;
    const simulated = await verify(partner.testApiKey, testTag);
    // No DNS server was asked for the test tag.
    expect(server.dns.queries.slice(queriesBefore).filter((q) => q.endsWith(domain))).toEqual([]);
    expect(simulated.status).toBe(status);
    expect(simulated.body).toMatchObject({ code, details: { reason } });
    expect(simulated.body.details.expected).toEqual({
      type: 'CNAME',
      name: recordHost(testTag),
      value: testTag.record.value,
    });

    LIVE_ZONES[suffix]!(server, liveTag);
    const live = await verify(partner.apiKey, liveTag);
    expect(server.dns.queries.slice(queriesBefore).some((q) => q.endsWith(domain))).toBe(true);
    expect(normalized(simulated, testTag)).toEqual(normalized(live, liveTag));

    // The failed check is the tag's lastCheck, as live; the tag stays unverified.
    const got = await api(server, partner.testApiKey).get(`/v1/partners/tag/${testTag.tagId}`);
    expect(got.body).toMatchObject({ livemode: false, isVerified: false, lastCheck: { ok: false, reason } });
  });

  it('any other custom domain verifies at once (no record published), and a magic word elsewhere does not count', async () => {
    const { partner } = server;
    for (const domain of [uniqueDomain(), `record-not-found-${uniqueDomain()}`.replace('.com', 'x.com')]) {
      const tag = await generateTag(server, { key: partner.testApiKey, domain });
      const res = await verify(partner.testApiKey, tag);
      expect(res.status, domain).toBe(200);
      expect(res.body).toEqual({ verified: true });
      const got = await api(server, partner.testApiKey).get(`/v1/partners/tag/${tag.tagId}`);
      expect(got.body).toMatchObject({
        livemode: false,
        status: 'waiting_for_events',
        isConnected: true,
        isVerified: true,
        lastCheck: { ok: true, found: [{ type: 'CNAME', name: recordHost(tag), value: tag.record.value }] },
      });
    }
  });

  it('a live key gets no simulation: the same magic domain is checked in DNS', async () => {
    const tag = await generateTag(server, { key: server.partner.apiKey, domain: uniqueDomain('shop') });
    server.dns.setCname(recordHost(tag), tag.record.value);
    expect((await verify(server.partner.apiKey, tag)).status).toBe(200);
    const merchantId = await createMerchant(server, server.partner.apiKey);
    const magic = await generateTag(server, {
      key: server.partner.apiKey,
      merchantId,
      domain: uniqueDomain('live').replace('.com', '-wrong-target.com'),
    });
    server.dns.setCname(recordHost(magic), magic.record.value);
    expect((await verify(server.partner.apiKey, magic)).status).toBe(200);
  });
});
