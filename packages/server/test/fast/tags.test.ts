import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  failureOf,
  type InProcessApp,
  type InProcessPartner,
  startInProcessApp,
} from '../../src/testing/index.js';

// tag.generate, tag.get, tag.snippet and tag.verify through createCaller; verify asks the loopback
// DNS server (real UDP DNS, no mock). test/tags-*.test.ts hold the HTTP side and every DNS failure.
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp();
});
afterAll(() => app?.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uniqueDomain = (tld = 'com') => `shop-${randomBytes(4).toString('hex')}.${tld}`;

interface Setup {
  partner: InProcessPartner;
  caller: Caller;
  merchantId: string;
}

async function setup(): Promise<Setup> {
  const partner = await app.createPartner();
  const caller = app.caller(partner.apiKey);
  const { merchantId } = await caller.merchant.create({ name: 'Tagged' });
  return { partner, caller, merchantId };
}

function customTag(s: Setup, domain = uniqueDomain()) {
  return s.caller.tag.generate({ merchantId: s.merchantId, domain });
}

describe('tag.generate', () => {
  it('makes a sub-domain of the partner domain preverified: active at once, on the shared target', async () => {
    const s = await setup();
    const domain = `shop.${s.partner.domain}`;
    expect(await s.caller.tag.generate({ merchantId: s.merchantId, domain })).toEqual({
      tagId: expect.stringMatching(UUID),
      domain,
      record: { type: 'CNAME', name: expect.stringMatching(/^edge-/), value: app.dns.targetHost, ttl: 300 },
      status: 'active',
      livemode: true,
      message: 'New tag created successfully',
      consentMode: 'none',
      respectGpc: true,
      cookieless: false,
    });
  });

  it('says livemode: false to a test key, on a new tag and on the existing one, as the tag itself does', async () => {
    const partner = await app.createPartner();
    const test = app.caller(partner.testApiKey);
    const { merchantId } = await test.merchant.create({ name: 'Test shop' });
    const domain = `shop.${partner.domain}`;
    const created = await test.tag.generate({ merchantId, domain });
    const again = await test.tag.generate({ merchantId, domain });
    expect([created.livemode, again.livemode]).toEqual([false, false]);
    expect((await test.tag.get({ tagId: created.tagId })).livemode).toBe(false);
  });

  it('makes another registrable domain custom: inactive, with its own target under the target host', async () => {
    const s = await setup();
    const tag = await customTag(s);
    expect(tag).toMatchObject({ status: 'inactive', message: 'New tag created successfully' });
    expect(tag.record.value).toMatch(new RegExp(`^[a-z0-9]{12}\\.${app.dns.targetHost.replaceAll('.', '\\.')}$`));
    const [merchant] = (await s.caller.merchant.list({})).merchants;
    expect(merchant?.tags).toEqual([
      expect.objectContaining({ tagId: tag.tagId, hostname: tag.domain, status: 'inactive', isVerified: false }),
    ]);
  });

  it('returns the existing custom tag on a second call, even for another domain', async () => {
    const s = await setup();
    const first = await customTag(s);
    const again = await s.caller.tag.generate({ merchantId: s.merchantId, domain: uniqueDomain() });
    expect(again).toEqual({ ...first, message: 'Existing tag retrieved' });
  });

  it('answers 404 MERCHANT_NOT_FOUND alike for a missing merchant and another partner’s merchant', async () => {
    const s = await setup();
    const other = await setup();
    for (const merchantId of [randomUUID(), other.merchantId]) {
      const failure = await failureOf(s.caller.tag.generate({ merchantId, domain: uniqueDomain() }));
      expect(failure).toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND', trpcCode: 'NOT_FOUND' });
    }
    expect((await other.caller.merchant.list({})).merchants[0]?.tags).toEqual([]);
  });

  it.each([
    ['a protocol', 'https://shop.example.com'],
    ['a path', 'example.com/x'],
    ['no TLD', 'localhost'],
  ])('refuses a domain with %s: 400 VALIDATION_ERROR naming domain', async (_, domain) => {
    const s = await setup();
    const failure = await failureOf(s.caller.tag.generate({ merchantId: s.merchantId, domain }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(failure.message).toContain('domain');
  });
});

describe('tag.get and tag.snippet', () => {
  it('answers a fresh custom tag in full, its first re-check scheduled', async () => {
    const s = await setup();
    const tag = await customTag(s);
    const got = await s.caller.tag.get({ tagId: tag.tagId });
    expect(got).toEqual({
      tagId: tag.tagId,
      merchantId: s.merchantId,
      livemode: true,
      hostname: `${tag.record.name}.${tag.domain}`,
      domain: tag.domain,
      domainType: 'custom',
      status: 'inactive',
      isConnected: false,
      isVerified: false,
      record: tag.record,
      createdAt: expect.any(String),
      verifiedAt: null,
      firstEventAt: null,
      lastEventAt: null,
      lastCheck: null,
      nextCheckAt: expect.any(String),
      consentMode: 'none',
      respectGpc: true,
      cookieless: false,
    });
    expect(Date.parse(got.nextCheckAt as string)).toBeGreaterThan(Date.parse(got.createdAt));
  });

  it('gives the snippet of the collector host: script URL and HTML that loads it', async () => {
    const s = await setup();
    const tag = await customTag(s);
    const snippet = await s.caller.tag.snippet({ tagId: tag.tagId });
    const host = `${tag.record.name}.${tag.domain}`;
    expect(snippet).toEqual({
      tagId: tag.tagId,
      collectorHost: host,
      scriptUrl: `https://${host}/t/${tag.tagId}.js`,
      html: expect.stringContaining(JSON.stringify(`https://${host}/t/${tag.tagId}.js`)),
    });
    expect(snippet.html).toMatch(/^<script>.*<\/script>$/);
  });

  it("keeps another partner's tag out: get 404 TAG_NOT_FOUND, snippet 403 ACCESS_DENIED", async () => {
    const mine = await setup();
    const theirs = await customTag(await setup());
    const got = await failureOf(mine.caller.tag.get({ tagId: theirs.tagId }));
    expect(got).toEqual({
      status: 404,
      trpcCode: 'NOT_FOUND',
      code: 'TAG_NOT_FOUND',
      message: `No tag ${theirs.tagId}`,
    });
    const missing = await failureOf(mine.caller.tag.get({ tagId: randomUUID() }));
    expect(missing.code).toBe('TAG_NOT_FOUND');
    const snippet = await failureOf(mine.caller.tag.snippet({ tagId: theirs.tagId }));
    expect(snippet).toMatchObject({ status: 403, code: 'ACCESS_DENIED' });
    expect(snippet.message).not.toContain(theirs.domain);
  });
});

describe('tag.verify against the loopback DNS server', () => {
  const recordHost = (tag: { record: { name: string }; domain: string }) => `${tag.record.name}.${tag.domain}`;

  it('verifies a published CNAME: waiting_for_events, connected, verified, the check recorded', async () => {
    const s = await setup();
    const tag = await customTag(s);
    app.dns.setCname(recordHost(tag), tag.record.value);
    expect(await s.caller.tag.verify({ tagId: tag.tagId, subdomain: `www.${tag.domain}` })).toEqual({ verified: true });
    expect(app.dns.queries).toContain(recordHost(tag));
    expect(await s.caller.tag.get({ tagId: tag.tagId })).toMatchObject({
      status: 'waiting_for_events',
      isConnected: true,
      isVerified: true,
      verifiedAt: expect.any(String),
      lastCheck: expect.objectContaining({ ok: true }),
    });
  });

  it('RECORD_NOT_FOUND: 422 with the expected record as details; the tag unchanged', async () => {
    const s = await setup();
    const tag = await customTag(s);
    const failure = await failureOf(s.caller.tag.verify({ tagId: tag.tagId, subdomain: tag.domain }));
    expect(failure).toMatchObject({ status: 422, code: 'VALIDATION_ERROR', trpcCode: 'UNPROCESSABLE_CONTENT' });
    expect(failure.details).toEqual({
      reason: 'RECORD_NOT_FOUND',
      expected: { type: 'CNAME', name: recordHost(tag), value: tag.record.value },
      found: [],
      checkedAt: expect.any(String),
    });
    expect(await s.caller.tag.get({ tagId: tag.tagId })).toMatchObject({ status: 'inactive', isVerified: false });
  });

  it('WRONG_TARGET: 422 naming the host found; verifies once the record is fixed', async () => {
    const s = await setup();
    const tag = await customTag(s);
    app.dns.setCname(recordHost(tag), 'elsewhere.example.net');
    const failure = await failureOf(s.caller.tag.verify({ tagId: tag.tagId, subdomain: tag.domain }));
    expect(failure.status).toBe(422);
    expect(failure.details).toMatchObject({
      reason: 'WRONG_TARGET',
      found: [{ type: 'CNAME', name: recordHost(tag), value: 'elsewhere.example.net' }],
    });
    app.dns.setCname(recordHost(tag), tag.record.value);
    expect(await s.caller.tag.verify({ tagId: tag.tagId, subdomain: tag.domain })).toEqual({ verified: true });
  });

  it('answers 400 for a subdomain on another root domain without asking DNS', async () => {
    const s = await setup();
    const tag = await customTag(s);
    const other = uniqueDomain();
    const failure = await failureOf(s.caller.tag.verify({ tagId: tag.tagId, subdomain: `shop.${other}` }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(failure.message).toContain(tag.domain);
    expect(app.dns.queries.some((q) => q.endsWith(other))).toBe(false);
  });

  it("answers 404 for an unknown tag and 403 ACCESS_DENIED for another partner's, leaving it alone", async () => {
    const mine = await setup();
    const other = await setup();
    const theirs = await customTag(other);
    app.dns.setCname(recordHost(theirs), theirs.record.value);
    const missing = await failureOf(mine.caller.tag.verify({ tagId: randomUUID(), subdomain: 'example.com' }));
    expect(missing).toMatchObject({ status: 404, code: 'TAG_NOT_FOUND' });
    const foreign = await failureOf(mine.caller.tag.verify({ tagId: theirs.tagId, subdomain: theirs.domain }));
    expect(foreign).toMatchObject({ status: 403, code: 'ACCESS_DENIED' });
    expect(await other.caller.tag.get({ tagId: theirs.tagId })).toMatchObject({
      status: 'inactive',
      isVerified: false,
    });
  });

  it('verifies a preverified tag without DNS', async () => {
    const s = await setup();
    const tag = await s.caller.tag.generate({ merchantId: s.merchantId, domain: s.partner.domain });
    const before = app.dns.queries.length;
    expect(await s.caller.tag.verify({ tagId: tag.tagId, subdomain: `shop.${s.partner.domain}` })).toEqual({
      verified: true,
    });
    expect(app.dns.queries.length).toBe(before);
    expect(await s.caller.tag.get({ tagId: tag.tagId })).toMatchObject({ status: 'active', isVerified: true });
  });
});
