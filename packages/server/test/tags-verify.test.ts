import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import {
  type GeneratedTag,
  generateTag,
  listedTag,
  MISSING_ID,
  preverifiedTag,
  publishCname,
  uniqueDomain,
} from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

function verify(body: unknown, key = server.partner.apiKey) {
  return api(server, key).post('/v1/partners/tag/verify', body);
}

function recordHost(tag: GeneratedTag): string {
  return `${tag.record.name}.${tag.domain}`;
}

async function expectUnchanged(tag: GeneratedTag): Promise<void> {
  expect(await listedTag(server, tag)).toMatchObject({ status: 'inactive', isConnected: false, isVerified: false });
}

describe('POST /v1/partners/tag/verify: DNS match', () => {
  it.each([
    ['the target host', (host: string) => host],
    ['the target host with a trailing dot', (host: string) => `${host}.`],
    ['the target host in upper case', (host: string) => host.toUpperCase()],
  ])('verifies a CNAME to %s and moves the tag to waiting_for_events', async (_, target) => {
    const tag = await generateTag(server);
    publishCname(server, tag, target(tag.record.value));
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ verified: true });
    expect(server.dns.queries).toContain(recordHost(tag));
    expect(await listedTag(server, tag)).toMatchObject({
      status: 'waiting_for_events',
      isConnected: true,
      isVerified: true,
    });
  });

  it('succeeds again when repeated', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag);
    expect((await verify({ tagId: tag.tagId, subdomain: tag.domain })).body).toEqual({ verified: true });
    const again = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ verified: true });
    expect(await listedTag(server, tag)).toMatchObject({ status: 'waiting_for_events', isVerified: true });
  });

  it('accepts a sub-domain of the tag domain, in any case, and checks the tag record', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag);
    const res = await verify({ tagId: tag.tagId, subdomain: `Shop.EU.${tag.domain.toUpperCase()}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ verified: true });
    expect(await listedTag(server, tag)).toMatchObject({ status: 'waiting_for_events' });
  });

  it('verifies a domain under a multi-label public suffix', async () => {
    const tag = await generateTag(server, { domain: uniqueDomain('shop', 'co.uk') });
    publishCname(server, tag);
    const res = await verify({ tagId: tag.tagId, subdomain: `www.${tag.domain}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ verified: true });
  });
});

describe('POST /v1/partners/tag/verify: DNS failures, with details', () => {
  /** The 422/503 body: the human message plus `details` { reason, expected, found, checkedAt }. */
  function expectDetails(tag: GeneratedTag, body: Json, reason: string, found: unknown[]): void {
    expect(body.details).toEqual({
      reason,
      expected: { type: 'CNAME', name: recordHost(tag), value: tag.record.value },
      found,
      checkedAt: expect.any(String),
    });
    expect(Date.now() - Date.parse(body.details.checkedAt)).toBeLessThan(60_000);
  }

  it('RECORD_NOT_FOUND: 422 naming the expected record when the name does not exist (NXDOMAIN)', async () => {
    const tag = await generateTag(server);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toContain(tag.record.value);
    expect(res.body.message).toContain(recordHost(tag));
    expectDetails(tag, res.body, 'RECORD_NOT_FOUND', []);
    await expectUnchanged(tag);
  });

  it.each([
    ['A', { kind: 'a' as const, address: '192.0.2.10' }],
    ['AAAA', { kind: 'aaaa' as const, address: '2001:db8::10' }],
  ])('NOT_A_CNAME: 422 when the name answers %s records (flattened or proxied)', async (type, behaviour) => {
    const tag = await generateTag(server);
    server.dns.set(recordHost(tag), behaviour);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toContain(behaviour.address);
    expectDetails(tag, res.body, 'NOT_A_CNAME', [{ type, name: recordHost(tag), value: behaviour.address }]);
    await expectUnchanged(tag);
  });

  it('WRONG_TARGET: 422 naming the expected and the found host when the CNAME points elsewhere', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag, 'elsewhere.example.net');
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toContain(tag.record.value);
    expect(res.body.message).toContain('elsewhere.example.net');
    expectDetails(tag, res.body, 'WRONG_TARGET', [
      { type: 'CNAME', name: recordHost(tag), value: 'elsewhere.example.net' },
    ]);
    await expectUnchanged(tag);
  });

  it("WRONG_TARGET: the shared target host, or another tag's target, is not this tag's", async () => {
    const tag = await generateTag(server);
    const other = await generateTag(server);
    for (const target of [server.dns.targetHost, other.record.value]) {
      publishCname(server, tag, target);
      const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
      expect(res.status).toBe(422);
      expect(res.body.details.reason).toBe('WRONG_TARGET');
    }
    await expectUnchanged(tag);
  });

  it('answers 422 when the CNAME only resembles the target', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag, `${tag.record.value}.evil.example`);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body.details.reason).toBe('WRONG_TARGET');
    await expectUnchanged(tag);
  });

  it('follows a CNAME chain (through a CDN) to the target, up to 4 CNAMEs', async () => {
    const tag = await generateTag(server);
    const cdn = `${tag.tagId.slice(0, 8)}.cdn-example.net`;
    publishCname(server, tag, `a.${cdn}`);
    server.dns.setCname(`a.${cdn}`, `b.${cdn}`);
    server.dns.setCname(`b.${cdn}`, `c.${cdn}`);
    server.dns.setCname(`c.${cdn}`, tag.record.value);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(200);
    expect(await listedTag(server, tag)).toMatchObject({ status: 'waiting_for_events', isVerified: true });
  });

  it('CNAME_CHAIN_TOO_LONG: 422 for a chain of 5 CNAMEs, and for a loop', async () => {
    const tag = await generateTag(server);
    const cdn = `${tag.tagId.slice(0, 8)}.cdn-example.net`;
    publishCname(server, tag, `a.${cdn}`);
    for (const [from, to] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
    ])
      server.dns.setCname(`${from}.${cdn}`, `${to}.${cdn}`);
    server.dns.setCname(`d.${cdn}`, tag.record.value);
    const long = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(long.status).toBe(422);
    expect(long.body.details.reason).toBe('CNAME_CHAIN_TOO_LONG');
    expect(long.body.details.found).toHaveLength(4);
    server.dns.setCname(`b.${cdn}`, `a.${cdn}`);
    const loop = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(loop.status).toBe(422);
    expect(loop.body.details.reason).toBe('CNAME_CHAIN_TOO_LONG');
    await expectUnchanged(tag);
  });

  it('WRONG_TARGET: a chain that ends elsewhere names every hop', async () => {
    const tag = await generateTag(server);
    const cdn = `${tag.tagId.slice(0, 8)}.cdn-example.net`;
    publishCname(server, tag, `a.${cdn}`);
    server.dns.set(`a.${cdn}`, { kind: 'a', address: '192.0.2.80' });
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expectDetails(tag, res.body, 'WRONG_TARGET', [{ type: 'CNAME', name: recordHost(tag), value: `a.${cdn}` }]);
  });

  it('WILDCARD_RECORD: 422 when a random name under the domain also reaches the target', async () => {
    const tag = await generateTag(server);
    server.dns.setCname(`*.${tag.domain}`, tag.record.value);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body.details.reason).toBe('WILDCARD_RECORD');
    expect(res.body.message).toContain('wildcard');
    // An exact record beside the wildcard does not help: the wildcard still answers for any name.
    publishCname(server, tag);
    expect((await verify({ tagId: tag.tagId, subdomain: tag.domain })).body.details.reason).toBe('WILDCARD_RECORD');
    // A wildcard pointing elsewhere is fine.
    server.dns.setCname(`*.${tag.domain}`, 'www.example.net');
    expect((await verify({ tagId: tag.tagId, subdomain: tag.domain })).status).toBe(200);
  });

  it.each([
    ['SERVFAIL', { kind: 'servfail' as const }],
    ['REFUSED', { kind: 'refused' as const }],
  ])('RESOLVER_UNAVAILABLE: 503 EXTERNAL_SERVICE_ERROR on %s', async (_, behaviour) => {
    const tag = await generateTag(server);
    server.dns.set(recordHost(tag), behaviour);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('EXTERNAL_SERVICE_ERROR');
    expectDetails(tag, res.body, 'RESOLVER_UNAVAILABLE', []);
    await expectUnchanged(tag);
  });

  it('RESOLVER_UNAVAILABLE: 503 within the DNS budget when the query is dropped', async () => {
    const tag = await generateTag(server);
    server.dns.set(recordHost(tag), { kind: 'drop' });
    const started = performance.now();
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('EXTERNAL_SERVICE_ERROR');
    expect(res.body.details.reason).toBe('RESOLVER_UNAVAILABLE');
    expect(elapsed).toBeLessThan(2500);
    await expectUnchanged(tag);
  });

  it('verifies once the record is published after a failure', async () => {
    const tag = await generateTag(server);
    expect((await verify({ tagId: tag.tagId, subdomain: tag.domain })).status).toBe(422);
    publishCname(server, tag);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(200);
    expect(await listedTag(server, tag)).toMatchObject({ status: 'waiting_for_events', isVerified: true });
  });
});

describe('POST /v1/partners/tag/verify: input and ownership', () => {
  it('answers 400 for a subdomain on another root domain, without asking DNS', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag);
    const other = uniqueDomain('other');
    const res = await verify({ tagId: tag.tagId, subdomain: `shop.${other}` });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(tag.domain) });
    expect(server.dns.queries.some((q) => q.endsWith(other))).toBe(false);
    await expectUnchanged(tag);
  });

  it.each([
    ['a protocol', 'https://shop.example.com'],
    ['a path', 'example.com/x'],
    ['no TLD', 'localhost'],
    ['a space', 'shop .example.com'],
    ['an empty string', ''],
    ['a non-string', 5],
  ])('answers 400 for a subdomain with %s', async (_, subdomain) => {
    const tag = await generateTag(server);
    const res = await verify({ tagId: tag.tagId, subdomain });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('subdomain') });
    await expectUnchanged(tag);
  });

  it.each([
    ['a missing tagId', { subdomain: 'example.com' }],
    ['a tagId that is not a UUID', { tagId: 'tag-1', subdomain: 'example.com' }],
    ['a missing subdomain', { tagId: MISSING_ID }],
  ])('answers 400 for %s', async (_, body) => {
    const res = await verify(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  it('answers 404 TAG_NOT_FOUND for an unknown tag', async () => {
    const res = await verify({ tagId: MISSING_ID, subdomain: 'example.com' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'TAG_NOT_FOUND', message: expect.stringContaining(MISSING_ID) });
  });

  it("answers 403 ACCESS_DENIED for another partner's tag and leaves it alone", async () => {
    const other = await server.createPartner();
    const tag = await generateTag(server, { key: other.apiKey });
    publishCname(server, tag);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 'ACCESS_DENIED', message: expect.any(String) });
    expect(res.body.message).not.toContain(other.partnerId);
    expect(await listedTag(server, tag, other.apiKey)).toMatchObject({ status: 'inactive', isVerified: false });
  });
});

describe('POST /v1/partners/tag/verify: preverified tags', () => {
  it('answers { verified: true } without DNS; the tag stays active and reads isVerified: true', async () => {
    const partner = await server.createPartner();
    const tag = await preverifiedTag(server, partner);
    const queriesBefore = server.dns.queries.length;
    const res = await verify({ tagId: tag.tagId, subdomain: `shop.${partner.domain}` }, partner.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ verified: true });
    expect(server.dns.queries.length).toBe(queriesBefore);
    expect(await listedTag(server, tag, partner.apiKey)).toMatchObject({ status: 'active', isVerified: true });
  });

  it("answers 400 for a subdomain outside the partner's domain", async () => {
    const partner = await server.createPartner();
    const tag = await preverifiedTag(server, partner);
    const res = await verify({ tagId: tag.tagId, subdomain: uniqueDomain() }, partner.apiKey);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(await listedTag(server, tag, partner.apiKey)).toMatchObject({ status: 'active' });
  });
});
