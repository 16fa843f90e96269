import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import { createMerchant, listedMerchant, MISSING_ID, uniqueDomain } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function generate(body: unknown, key = server.partner.apiKey) {
  return api(server, key).post('/v1/partners/tag/generate', body);
}

describe('POST /v1/partners/tag/generate: domain types', () => {
  it.each([
    ['the partner domain itself', ''],
    ['a sub-domain of the partner domain', 'shop.'],
    ['a deeper sub-domain of the partner domain', 'eu.shop.'],
  ])('makes %s preverified: active at once', async (_, prefix) => {
    const merchantId = await createMerchant(server);
    const domain = `${prefix}${server.partner.domain}`;
    const res = await generate({ merchantId, domain });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tagId: expect.stringMatching(UUID),
      domain,
      record: { type: 'CNAME', name: expect.stringMatching(/^edge-/), value: server.dns.targetHost, ttl: 300 },
      status: 'active',
      livemode: true,
      message: 'New tag created successfully',
      consentMode: 'none',
      respectGpc: true,
      cookieless: false,
    });
    const merchant = await listedMerchant(server, merchantId);
    expect(merchant.tags).toEqual([
      expect.objectContaining({ tagId: res.body.tagId, hostname: domain, status: 'active' }),
    ]);
  });

  it('makes any other registrable domain custom: inactive until verified', async () => {
    const merchantId = await createMerchant(server);
    const domain = uniqueDomain();
    const res = await generate({ merchantId, domain });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tagId: expect.stringMatching(UUID),
      domain,
      record: {
        type: 'CNAME',
        name: expect.stringMatching(/^edge-[a-z0-9]+$/),
        // Its own target under the target host (docs/decisions/dns-verification.md, "Per-tag CNAME target").
        value: expect.stringMatching(new RegExp(`^[a-z0-9]{12}\\.${server.dns.targetHost.replaceAll('.', '\\.')}$`)),
        ttl: 300,
      },
      status: 'inactive',
      livemode: true,
      message: 'New tag created successfully',
      consentMode: 'none',
      respectGpc: true,
      cookieless: false,
    });
    const merchant = await listedMerchant(server, merchantId);
    expect(merchant.tags).toEqual([
      expect.objectContaining({ hostname: domain, status: 'inactive', isConnected: false, isVerified: false }),
    ]);
  });

  it('does not treat a look-alike of the partner domain as preverified', async () => {
    const merchantId = await createMerchant(server);
    // `<label>-partner-tags-test.com` ends with the partner domain's text but is not under it.
    const lookalike = `x${server.partner.domain.replaceAll('.', '-')}.com`;
    const res = await generate({ merchantId, domain: lookalike });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('inactive');
  });

  it('gives each custom tag its own record label', async () => {
    const a = await generate({ merchantId: await createMerchant(server), domain: uniqueDomain() });
    const b = await generate({ merchantId: await createMerchant(server), domain: uniqueDomain() });
    expect(a.body.record.name).not.toBe(b.body.record.name);
  });

  it('holds a preverified and a custom tag for one merchant', async () => {
    const merchantId = await createMerchant(server);
    const pre = await generate({ merchantId, domain: server.partner.domain });
    const custom = await generate({ merchantId, domain: uniqueDomain() });
    expect(pre.body.message).toBe('New tag created successfully');
    expect(custom.body.message).toBe('New tag created successfully');
    expect(pre.body.tagId).not.toBe(custom.body.tagId);
    const merchant = await listedMerchant(server, merchantId);
    expect(merchant.tags.map((t: Json) => t.tagId).sort()).toEqual([pre.body.tagId, custom.body.tagId].sort());
  });
});

describe('POST /v1/partners/tag/generate: domain validation', () => {
  it.each([
    ['example.co.uk', 'example.co.uk'],
    ['example.xn--p1ai', 'example.xn--p1ai'],
    ['my-shop.io', 'my-shop.io'],
    ['UPPER-Case.COM', 'upper-case.com'],
    ['  padded.org  ', 'padded.org'],
  ])('accepts %s as custom domain %s', async (input, stored) => {
    const merchantId = await createMerchant(server);
    const res = await generate({ merchantId, domain: input });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('inactive');
    const merchant = await listedMerchant(server, merchantId);
    expect(merchant.tags[0].hostname).toBe(stored);
  });

  it.each([
    ['a sub-domain under a multi-label suffix', 'shop.example.co.uk'],
    ['a sub-domain of a custom domain', 'shop.example.com'],
    ['a protocol', 'http://x.com'],
    ['an https URL', 'https://x.com'],
    ['a www. prefix', 'www.x.com'],
    ['a path', 'x.com/path'],
    ['a port', 'x.com:8080'],
    ['a space', 'x .com'],
    ['no TLD', 'localhost'],
    ['a public suffix alone', 'co.uk'],
    ['an unknown TLD', 'example.notarealtld'],
    ['a one-letter TLD', 'example.c'],
    ['a numeric TLD', 'example.123'],
    ['a trailing dot', 'example.com.'],
    ['a leading hyphen', '-example.com'],
    ['an underscore', 'ex_ample.com'],
    ['an IP address', '192.168.0.1'],
    ['an empty string', ''],
    ['a non-string', 42],
  ])('rejects %s (%s) with 400 VALIDATION_ERROR and creates no tag', async (_, domain) => {
    const merchantId = await createMerchant(server);
    const res = await generate({ merchantId, domain });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('domain') });
    expect((await listedMerchant(server, merchantId)).tags).toEqual([]);
  });

  it('rejects a missing domain with 400', async () => {
    const res = await generate({ merchantId: await createMerchant(server) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('domain') });
  });

  it.each([
    ['missing', { domain: 'x.com' }],
    ['not a UUID', { merchantId: 'abc', domain: 'x.com' }],
    ['a UUID with a bad character', { merchantId: `${MISSING_ID.slice(0, -1)}g`, domain: 'x.com' }],
    ['a number', { merchantId: 7, domain: 'x.com' }],
  ])('rejects a merchantId that is %s with 400 VALIDATION_ERROR', async (_, body) => {
    const res = await generate(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('merchantId') });
  });
});

describe('POST /v1/partners/tag/generate: existing tags', () => {
  it('returns the existing tag on a second call, for the same or another custom domain', async () => {
    const merchantId = await createMerchant(server);
    const domain = uniqueDomain();
    const first = await generate({ merchantId, domain });
    const second = await generate({ merchantId, domain });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ...first.body, message: 'Existing tag retrieved' });
    // One tag per merchant and domain type: another custom domain returns the same tag.
    const other = await generate({ merchantId, domain: uniqueDomain() });
    expect(other.body).toEqual({ ...first.body, message: 'Existing tag retrieved' });
    // ...and says which domain the tag it returns is for (security audit, finding 11).
    expect(first.body.domain).toBe(domain);
    expect(other.body.domain).toBe(domain);
    expect((await listedMerchant(server, merchantId)).tags).toHaveLength(1);
  });

  it('returns the existing preverified tag on a second call', async () => {
    const merchantId = await createMerchant(server);
    const first = await generate({ merchantId, domain: server.partner.domain });
    const second = await generate({ merchantId, domain: server.partner.domain });
    expect(second.body).toEqual({ ...first.body, message: 'Existing tag retrieved' });
  });

  it('creates exactly one tag under 20 concurrent calls', async () => {
    const merchantId = await createMerchant(server);
    const domain = uniqueDomain();
    const results = await Promise.all(Array.from({ length: 20 }, () => generate({ merchantId, domain })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.tagId)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.record.name)).size).toBe(1);
    const messages = results.map((r) => r.body.message);
    expect(messages.filter((m) => m === 'New tag created successfully')).toHaveLength(1);
    expect(messages.filter((m) => m === 'Existing tag retrieved')).toHaveLength(19);
    expect((await listedMerchant(server, merchantId)).tags).toHaveLength(1);
  });
});

describe('POST /v1/partners/tag/generate: merchant lookup', () => {
  it('answers 404 MERCHANT_NOT_FOUND for an unknown merchant', async () => {
    const res = await generate({ merchantId: MISSING_ID, domain: uniqueDomain() });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'MERCHANT_NOT_FOUND', message: expect.stringContaining(MISSING_ID) });
  });

  it("answers another partner's merchant exactly like a missing one", async () => {
    const other = await server.createPartner();
    const theirs = await createMerchant(server, other.apiKey);
    const domain = uniqueDomain();
    const foreign = await generate({ merchantId: theirs, domain });
    const missing = await generate({ merchantId: MISSING_ID, domain });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ ...missing.body, message: missing.body.message.replace(MISSING_ID, theirs) });
    expect((await listedMerchant(server, theirs, other.apiKey)).tags).toEqual([]);
  });

  it("answers another partner's merchant that has the tag asked for exactly like a missing one", async () => {
    const other = await server.createPartner();
    const theirs = await createMerchant(server, other.apiKey);
    const domain = `shop.${other.domain}`;
    const made = await generate({ merchantId: theirs, domain }, other.apiKey);
    expect(made.status).toBe(200);
    // Asked with our key: not our merchant, whatever tag it has (preverified for them, custom for us).
    for (const asked of [domain, `${server.partner.domain}`]) {
      const foreign = await generate({ merchantId: theirs, domain: asked });
      const missing = await generate({ merchantId: MISSING_ID, domain: asked });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ ...missing.body, message: missing.body.message.replace(MISSING_ID, theirs) });
    }
    const again = await generate({ merchantId: theirs, domain }, other.apiKey);
    expect(again.body).toMatchObject({ tagId: made.body.tagId, message: 'Existing tag retrieved' });
  });
});
