import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';
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
    publishCname(server, tag, target(server.dns.targetHost));
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

describe('POST /v1/partners/tag/verify: DNS failures', () => {
  it('answers 422 naming the expected target when the record does not exist (NXDOMAIN)', async () => {
    const tag = await generateTag(server);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(server.dns.targetHost) });
    expect(res.body.message).toContain(recordHost(tag));
    await expectUnchanged(tag);
  });

  it('answers 422 when the name has only an A record (NODATA)', async () => {
    const tag = await generateTag(server);
    server.dns.set(recordHost(tag), { kind: 'a', address: '192.0.2.10' });
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(server.dns.targetHost) });
    await expectUnchanged(tag);
  });

  it('answers 422 naming the expected and the found host when the CNAME points elsewhere', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag, 'elsewhere.example.net');
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toContain(server.dns.targetHost);
    expect(res.body.message).toContain('elsewhere.example.net');
    await expectUnchanged(tag);
  });

  it('answers 422 when the CNAME only resembles the target', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag, `${server.dns.targetHost}.evil.example`);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(422);
    await expectUnchanged(tag);
  });

  it.each([
    ['SERVFAIL', { kind: 'servfail' as const }],
    ['REFUSED', { kind: 'refused' as const }],
  ])('answers 503 EXTERNAL_SERVICE_ERROR on %s', async (_, behaviour) => {
    const tag = await generateTag(server);
    server.dns.set(recordHost(tag), behaviour);
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ code: 'EXTERNAL_SERVICE_ERROR', message: expect.any(String) });
    await expectUnchanged(tag);
  });

  it('answers 503 EXTERNAL_SERVICE_ERROR within the DNS budget when the query is dropped', async () => {
    const tag = await generateTag(server);
    server.dns.set(recordHost(tag), { kind: 'drop' });
    const started = performance.now();
    const res = await verify({ tagId: tag.tagId, subdomain: tag.domain });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ code: 'EXTERNAL_SERVICE_ERROR', message: expect.any(String) });
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
  it('answers { verified: true } without DNS and the tag stays active', async () => {
    const partner = await server.createPartner();
    const tag = await preverifiedTag(server, partner);
    const queriesBefore = server.dns.queries.length;
    const res = await verify({ tagId: tag.tagId, subdomain: `shop.${partner.domain}` }, partner.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ verified: true });
    expect(server.dns.queries.length).toBe(queriesBefore);
    expect(await listedTag(server, tag, partner.apiKey)).toMatchObject({ status: 'active' });
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
