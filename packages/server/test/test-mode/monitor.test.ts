import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api, type Json } from '../helpers/api.js';
import { generateTag, uniqueDomain } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';

// The tag monitor's background checks of a test tag ask no DNS either (docs/decisions/test-mode.md):
// an unverified test tag is verified by its first re-check from the simulated zone, a magic domain
// keeps failing with its reason, and a live tag on the same magic domain is still checked in DNS.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: { TAG_MONITOR: 'on', TAG_RECHECK_SCHEDULE: '1s,1s', TAG_HEALTH_INTERVAL: '1h', TAG_RECHECK_WINDOW: '1h' },
  });
});
afterAll(async () => {
  await server?.close();
});

async function tagOf(key: string, tagId: string): Promise<Json> {
  return (await api(server, key).get(`/v1/partners/tag/${tagId}`)).body;
}

describe('test mode: the tag monitor on test tags', () => {
  it('re-checks test tags against the simulated zone, never DNS; a live tag on the same domain asks DNS', async () => {
    const key = server.partner.testApiKey;
    const plain = await generateTag(server, { key });
    const domain = uniqueDomain('mon').replace('.com', '-resolver-unavailable.com');
    const outage = await generateTag(server, { key, domain });
    const missing = await generateTag(server, {
      key,
      domain: uniqueDomain('mon').replace('.com', '-wrong-target.com'),
    });
    // A live tag on the outage domain, its record published: the monitor verifies it from DNS.
    const live = await generateTag(server, { key: server.partner.apiKey, domain });
    server.dns.setCname(`${live.record.name}.${domain}`, live.record.value);

    const verified = await until('the plain test tag verified', async () => {
      const tag = await tagOf(key, plain.tagId);
      return tag.isVerified ? tag : undefined;
    });
    expect(verified).toMatchObject({ livemode: false, status: 'waiting_for_events', lastCheck: { ok: true } });
    const failing = await until('the other test tags checked', async () => {
      const [a, b] = [await tagOf(key, outage.tagId), await tagOf(key, missing.tagId)];
      return a.lastCheck && b.lastCheck ? [a, b] : undefined;
    });
    expect(failing[0]).toMatchObject({ isVerified: false, lastCheck: { ok: false, reason: 'RESOLVER_UNAVAILABLE' } });
    expect(failing[1]).toMatchObject({ isVerified: false, lastCheck: { ok: false, reason: 'WRONG_TARGET' } });
    const liveTag = await until('the live tag on the same domain verified', async () => {
      const tag = await tagOf(server.partner.apiKey, live.tagId);
      return tag.isVerified ? tag : undefined;
    });
    expect(liveTag.livemode).toBe(true);
    // Only the live tag's names reached the DNS server.
    const asked = server.dns.queries.filter((q) => [plain.domain, missing.domain, domain].some((d) => q.endsWith(d)));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((q) => q.endsWith(domain) && !q.startsWith(`${outage.record.name}.`))).toBe(true);
  }, 40_000);
});
