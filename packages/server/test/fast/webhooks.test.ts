import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// webhooks.create/list/delete/rotateSecret through createCaller, with the URL rules on (no
// WEBHOOK_ALLOW_PRIVATE_URLS): host names resolve through the loopback DNS server. Nothing is
// delivered here (WEBHOOK_DELIVERY=off); test/webhooks/ holds delivery over HTTP.
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp({ env: { MAX_WEBHOOK_ENDPOINTS_PER_PARTNER: '3' } });
});
afterAll(() => app?.close());

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
/** A public address (TEST-NET ranges are "reserved", so refused). */
const PUBLIC_IP = '93.184.215.14';

async function partnerCaller(): Promise<Caller> {
  return app.caller((await app.createPartner()).apiKey);
}

/** A host name only the loopback DNS server knows, answering `address`. */
function hostAt(address: string): string {
  const host = `hooks-${randomBytes(4).toString('hex')}.example.org`;
  app.dns.set(host, { kind: 'a', address });
  return host;
}

describe('webhooks.create and list', () => {
  it('creates with a secret shown once; lists oldest first without secrets', async () => {
    const caller = await partnerCaller();
    const url = `https://${hostAt(PUBLIC_IP)}/hook`;
    const first = await caller.webhooks.create({ url, events: ['tag.verified', 'tag.verified'], description: ' ops ' });
    expect(first).toEqual({
      webhookId: expect.any(String),
      url,
      events: ['tag.verified'],
      description: 'ops',
      livemode: true,
      createdAt: expect.any(String),
      secret: expect.stringMatching(SECRET),
      secretOmitted: false,
    });
    // The list's order is the stored millisecond, ties by id: keep the two creates apart.
    await new Promise((resolve) => setTimeout(resolve, 2));
    const second = await caller.webhooks.create({ url: `https://${PUBLIC_IP}/other` });
    expect(second).toMatchObject({ events: null, description: null });
    expect(second.secret).not.toBe(first.secret);

    const listed = await caller.webhooks.list({});
    const { secret: _s, secretOmitted: _o, ...firstListed } = first;
    expect(listed.webhooks).toEqual([firstListed, expect.objectContaining({ webhookId: second.webhookId })]);
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    expect(listed.pagination).toEqual({
      currentPage: 1,
      itemsPerPage: 10,
      totalItems: 2,
      total: 2,
      totalPages: 1,
      hasNextPage: false,
      hasPreviousPage: false,
    });
    const paged = await caller.webhooks.list({ page: 2, limit: 1 });
    expect(paged.webhooks.map((w) => w.webhookId)).toEqual([second.webhookId]);
    expect(paged.pagination).toMatchObject({ totalPages: 2, hasNextPage: false, hasPreviousPage: true });
  });

  it('refuses the endpoint past MAX_WEBHOOK_ENDPOINTS_PER_PARTNER; a delete frees a place', async () => {
    const caller = await partnerCaller();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await caller.webhooks.create({ url: `https://${PUBLIC_IP}/${i}` })).webhookId);
    const failure = await failureOf(caller.webhooks.create({ url: `https://${PUBLIC_IP}/3` }));
    expect(failure).toMatchObject({ status: 409, code: 'LIMIT_EXCEEDED' });
    expect(failure.message).toContain('MAX_WEBHOOK_ENDPOINTS_PER_PARTNER (3)');
    await caller.webhooks.delete({ webhookId: ids[0] as string });
    await expect(caller.webhooks.create({ url: `https://${PUBLIC_IP}/4` })).resolves.toMatchObject({
      url: `https://${PUBLIC_IP}/4`,
    });
  });
});

describe('webhooks.create: URL rules', () => {
  it.each([
    ['not a URL', 'not a url', /absolute URL/],
    ['http', `http://${PUBLIC_IP}/hook`, /must use https/],
    ['ftp', 'ftp://example.com/x', /must use https/],
    ['credentials', `https://user:pw@${PUBLIC_IP}/hook`, /credentials/],
    ['a fragment', `https://${PUBLIC_IP}/hook#x`, /fragment/],
    ['loopback', 'https://127.0.0.1:8443/hook', /127\.0\.0\.1 is loopback/],
    ['a private address', 'https://10.0.0.5/hook', /10\.0\.0\.5 is private/],
    ['the metadata address', 'https://169.254.169.254/latest', /169\.254\.169\.254 is linkLocal/],
    ['localhost', 'https://localhost/hook', /loopback host/],
  ])('refuses %s: 400 VALIDATION_ERROR naming the rule, nothing stored', async (_, url, rule) => {
    const caller = await partnerCaller();
    const failure = await failureOf(caller.webhooks.create({ url }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', trpcCode: 'BAD_REQUEST' });
    expect(failure.message).toMatch(/^url: /);
    expect(failure.message).toMatch(rule);
    expect((await caller.webhooks.list({})).pagination.totalItems).toBe(0);
  });

  it('refuses a name that resolves to a private address, without naming the address', async () => {
    const caller = await partnerCaller();
    const host = hostAt('10.9.8.7');
    const failure = await failureOf(caller.webhooks.create({ url: `https://${host}/hook` }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(failure.message).toContain(`${host} resolves to a private address`);
    expect(failure.message).not.toContain('10.9.8.7');
    expect(app.dns.queries).toContain(host);
  });

  it('accepts a name that does not resolve yet (every send checks again)', async () => {
    const caller = await partnerCaller();
    const url = `https://unknown-${randomBytes(4).toString('hex')}.example.org/hook`;
    expect((await caller.webhooks.create({ url })).url).toBe(url);
  });

  it('refuses an unknown event type, naming events', async () => {
    const caller = await partnerCaller();
    const failure = await failureOf(
      caller.webhooks.create({ url: `https://${PUBLIC_IP}/h`, events: ['tag.nope' as 'tag.verified'] }),
    );
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(failure.message).toContain('events');
  });
});

describe('webhooks.delete and rotateSecret', () => {
  it('deletes once: gone from the list, then 404 WEBHOOK_NOT_FOUND', async () => {
    const caller = await partnerCaller();
    const { webhookId } = await caller.webhooks.create({ url: `https://${PUBLIC_IP}/h` });
    expect(await caller.webhooks.delete({ webhookId })).toBeUndefined();
    expect((await caller.webhooks.list({})).webhooks).toEqual([]);
    const again = await failureOf(caller.webhooks.delete({ webhookId }));
    expect(again).toMatchObject({ status: 404, code: 'WEBHOOK_NOT_FOUND', trpcCode: 'NOT_FOUND' });
    const rotate = await failureOf(caller.webhooks.rotateSecret({ webhookId }));
    expect(rotate.code).toBe('WEBHOOK_NOT_FOUND');
  });

  it('rotates to a new secret, the old one honoured for about a day', async () => {
    const caller = await partnerCaller();
    const created = await caller.webhooks.create({ url: `https://${PUBLIC_IP}/h` });
    const rotated = await caller.webhooks.rotateSecret({ webhookId: created.webhookId });
    expect(rotated).toEqual({
      secret: expect.stringMatching(SECRET),
      secretOmitted: false,
      previousSecretExpiresAt: expect.any(String),
    });
    expect(rotated.secret).not.toBe(created.secret);
    const overlap = Date.parse(rotated.previousSecretExpiresAt) - Date.now();
    expect(overlap).toBeGreaterThan(23 * 3600_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3600_000);
  });

  it('answers 400 for a webhookId that is not a UUID', async () => {
    const caller = await partnerCaller();
    const failure = await failureOf(caller.webhooks.delete({ webhookId: 'not-a-uuid' }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });
});

describe('webhooks: isolation between partners', () => {
  it("answers another partner's endpoint like a missing one, and leaves it alone", async () => {
    const mine = await partnerCaller();
    const theirs = await partnerCaller();
    const { webhookId } = await theirs.webhooks.create({ url: `https://${PUBLIC_IP}/theirs` });
    for (const call of [
      () => mine.webhooks.delete({ webhookId }),
      () => mine.webhooks.rotateSecret({ webhookId }),
      () => mine.webhooks.delete({ webhookId: randomUUID() }),
    ]) {
      expect(await failureOf(call())).toMatchObject({ status: 404, code: 'WEBHOOK_NOT_FOUND' });
    }
    expect((await mine.webhooks.list({})).webhooks).toEqual([]);
    expect((await theirs.webhooks.list({})).webhooks.map((w) => w.webhookId)).toEqual([webhookId]);
  });
});
