// Issue 30: a partner onboarded on a reserved name (`.example`, `.test`: RFC 2606/6761, accepted as
// partner domains) could not collect from its merchants' own pages. The collector's CORS took the
// tag's root domain from the public suffix list, which knows no reserved name, fell back to the
// collector host itself (`<record>.<partner domain>`) and refused the merchant's origin with 403;
// the muid cookie went to the tag's domain, which the browser refuses on the collector host.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestPartner, type TestServer } from '../../src/testing/index.js';
import { collectorHostOf, postEvents, rawRequest } from '../helpers/collector.js';
import { type GeneratedTag, generateTag } from '../helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

async function preverifiedOn(
  tld: 'example' | 'test',
): Promise<{ partner: TestPartner; tag: GeneratedTag; host: string }> {
  const partner = await server.createPartner(`Reserved ${tld}`, `shop-${randomBytes(4).toString('hex')}.${tld}`);
  const tag = await generateTag(server, { key: partner.apiKey, domain: `store.${partner.domain}` });
  // Preverified: active at once, served on the partner's onboarding record host.
  expect(tag.status).toBe('active');
  return { partner, tag, host: await collectorHostOf(server, tag, partner.apiKey) };
}

describe('collector CORS for preverified tags under reserved names', () => {
  it.each(['example', 'test'] as const)('accepts the merchant’s own origins under .%s', async (tld) => {
    const { partner, tag, host } = await preverifiedOn(tld);
    const body = { tagId: tag.tagId, events: [{ event_name: 'PageView' }] };
    for (const origin of [
      `https://store.${partner.domain}`,
      `https://${partner.domain}`,
      `https://www.${partner.domain}`,
      `http://store.${partner.domain}:8080`,
    ]) {
      const res = await postEvents(server.url, host, body, { origin });
      expect(res.status, origin).toBe(202);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
    }
    // The first-party cookie lives on the partner's root domain, which the collector host is under.
    const res = await postEvents(server.url, host, body, { origin: `https://store.${partner.domain}` });
    expect(res.headers['set-cookie']?.[0]).toContain(`Domain=${partner.domain}`);

    const preflight = await rawRequest(server.url, {
      method: 'OPTIONS',
      path: '/e',
      host,
      headers: { origin: `https://store.${partner.domain}`, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(`https://store.${partner.domain}`);
  });

  it('still refuses every other origin, reserved or not, with 403 { message, code }', async () => {
    const { partner, tag, host } = await preverifiedOn('example');
    const body = { tagId: tag.tagId, events: [{ event_name: 'PageView' }] };
    for (const origin of [
      'https://other-shop.example',
      `https://${partner.domain}.evil.test`,
      `https://x${partner.domain}`,
      'https://example',
      'https://evil.com',
      'null',
    ]) {
      const res = await postEvents(server.url, host, body, { origin });
      expect(res.status, origin).toBe(403);
      expect(res.json).toEqual({ message: expect.stringContaining('may not send events'), code: 'ACCESS_DENIED' });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});
