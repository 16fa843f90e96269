import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestPartner, type TestServer } from '../src/testing/index.js';
import { api, type Json } from './helpers/api.js';
import { collectorHostOf, postEvents, rawRequest } from './helpers/collector.js';
import {
  allEvents,
  collectOk,
  createMerchant,
  type GeneratedTag,
  MISSING_ID,
  publishCname,
  uniqueDomain,
} from './helpers/fixtures.js';

// Consent settings of a tag (docs/decisions/consent.md) over HTTP: generate and PATCH (REST and
// tRPC), the collector enforcing the tag's mode on `POST /e`, the script's inlined config and its
// ETag, and each event's consent state in the list and the export.
let server: TestServer;
let other: TestPartner;

beforeAll(async () => {
  server = await startTestServer();
  other = await server.createPartner('Other Partner');
});
afterAll(() => server?.close());

const key = () => server.partner.apiKey;

/** A verified custom tag of these consent settings (its collector host serves the script and `/e`). */
async function tagWith(consent: Json = {}): Promise<GeneratedTag & Json & { host: string }> {
  const merchantId = await createMerchant(server, key());
  const domain = uniqueDomain('consent');
  const res = await api(server, key()).post('/v1/partners/tag/generate', { merchantId, domain, ...consent });
  expect(res.status, res.text).toBe(200);
  const tag = { merchantId, domain, ...res.body };
  publishCname(server, tag);
  const verified = await api(server, key()).post('/v1/partners/tag/verify', { tagId: tag.tagId, subdomain: domain });
  expect(verified.status).toBe(200);
  return { ...tag, host: await collectorHostOf(server, tag) };
}

const patch = (tagId: string, body: unknown, apiKey = key()) =>
  api(server, apiKey).request('PATCH', `/v1/partners/tag/${tagId}`, {
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });

const UA = 'Mozilla/5.0 (consent test)';
const batch = (tag: { host: string; tagId: string }, body: Json, headers: Record<string, string> = {}) =>
  postEvents(server.url, tag.host, { tagId: tag.tagId, ...body }, { 'user-agent': UA, ...headers });
const cookieOf = (res: { headers: Record<string, unknown> }) => {
  const header = res.headers['set-cookie'] as string[] | undefined;
  return header?.[0];
};

describe('consent settings on generate and GET', () => {
  it('defaults: none, GPC respected, not cookieless; opt-in is cookieless unless told', async () => {
    expect(await tagWith()).toMatchObject({ consentMode: 'none', respectGpc: true, cookieless: false });
    expect(await tagWith({ consentMode: 'opt-in' })).toMatchObject({ consentMode: 'opt-in', cookieless: true });
    expect(await tagWith({ consentMode: 'opt-in', cookieless: false })).toMatchObject({ cookieless: false });
    const optOut = await tagWith({ consentMode: 'opt-out', respectGpc: false });
    expect(optOut).toMatchObject({ consentMode: 'opt-out', respectGpc: false, cookieless: false });
    const got = await api(server, key()).get(`/v1/partners/tag/${optOut.tagId}`);
    expect(got.body).toMatchObject({ consentMode: 'opt-out', respectGpc: false, cookieless: false });
  });

  it('an existing tag keeps its settings when generate is called again', async () => {
    const tag = await tagWith({ consentMode: 'opt-out' });
    const again = await api(server, key()).post('/v1/partners/tag/generate', {
      merchantId: tag.merchantId,
      domain: tag.domain,
      consentMode: 'opt-in',
    });
    expect(again.body).toMatchObject({ message: 'Existing tag retrieved', consentMode: 'opt-out' });
  });

  it('refuses a bad consent value on generate with 400', async () => {
    const merchantId = await createMerchant(server, key());
    const res = await api(server, key()).post('/v1/partners/tag/generate', {
      merchantId,
      domain: uniqueDomain(),
      consentMode: 'sometimes',
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('consentMode') });
  });
});

describe('PATCH /v1/partners/tag/{tagId}', () => {
  it('sets what is given, keeps the rest, answers the tag as GET does', async () => {
    const tag = await tagWith();
    const res = await patch(tag.tagId, { consentMode: 'opt-in' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ tagId: tag.tagId, consentMode: 'opt-in', respectGpc: true, cookieless: false });
    const cookieless = await patch(tag.tagId, { cookieless: true, respectGpc: false });
    expect(cookieless.body).toMatchObject({ consentMode: 'opt-in', respectGpc: false, cookieless: true });
    expect((await api(server, key()).get(`/v1/partners/tag/${tag.tagId}`)).body).toEqual(cookieless.body);
  });

  it('answers 4xx { message, code } for bad input, and 404 for a missing or another partner’s tag', async () => {
    const tag = await tagWith();
    const cases: [string, unknown, number, string][] = [
      [tag.tagId, {}, 400, 'VALIDATION_ERROR'],
      [tag.tagId, { consentMode: 'maybe' }, 400, 'VALIDATION_ERROR'],
      [tag.tagId, { respectGpc: 'yes' }, 400, 'VALIDATION_ERROR'],
      [tag.tagId, { cookieless: null }, 400, 'VALIDATION_ERROR'],
      [tag.tagId, '{"consentMode":', 400, 'VALIDATION_ERROR'],
      ['not-a-uuid', { consentMode: 'none' }, 400, 'VALIDATION_ERROR'],
      [MISSING_ID, { consentMode: 'none' }, 404, 'TAG_NOT_FOUND'],
    ];
    for (const [tagId, body, status, code] of cases) {
      const res = await patch(tagId, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status);
      expect(res.body).toEqual({ message: expect.any(String), code });
    }
    const foreign = await patch(tag.tagId, { consentMode: 'opt-in' }, other.apiKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'TAG_NOT_FOUND' });
    expect((await api(server, key()).get(`/v1/partners/tag/${tag.tagId}`)).body.consentMode).toBe('none');
    expect((await patch(tag.tagId, { consentMode: 'opt-in' }, 'mp_live_nope')).status).toBe(401);
  });

  it('is tag.update over tRPC', async () => {
    const tag = await tagWith();
    const res = await api(server, key()).post('/trpc/tag.update', { tagId: tag.tagId, consentMode: 'opt-out' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result.data).toMatchObject({ tagId: tag.tagId, consentMode: 'opt-out' });
    const bad = await api(server, key()).post('/trpc/tag.update', { tagId: tag.tagId });
    expect(bad.status).toBe(400);
  });

  it('changes the served script: its config and its ETag', async () => {
    const tag = await tagWith();
    const script = () => rawRequest(server.url, { path: `/t/${tag.tagId}.js`, host: tag.host });
    const before = await script();
    expect(before.status).toBe(200);
    expect(before.text).toContain('{"mode":"none","gpc":true,"cookieless":false}');
    await patch(tag.tagId, { consentMode: 'opt-in', cookieless: true });
    const after = await script();
    expect(after.text).toContain('{"mode":"opt-in","gpc":true,"cookieless":true}');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const revalidated = await rawRequest(server.url, {
      path: `/t/${tag.tagId}.js`,
      host: tag.host,
      headers: { 'if-none-match': String(before.headers.etag) },
    });
    expect(revalidated.status).toBe(200);
  });
});

describe('the collector enforces the tag’s mode on POST /e', () => {
  const pageView = [{ event_name: 'PageView', data: { path: '/' } }];

  it('opt-in, not cookieless: nothing stored and no cookie without consent; granted stores with a cookie', async () => {
    const tag = await tagWith({ consentMode: 'opt-in', cookieless: false });
    // A stale script (no signal), a claim of implied consent and a cookieless signal: all refused.
    for (const consent of [undefined, 'implied', 'cookieless']) {
      const res = await batch(tag, { consent, events: pageView });
      expect(res.status).toBe(202);
      expect(res.json).toEqual({ accepted: 0 });
      expect(cookieOf(res)).toBeUndefined();
    }
    const granted = await batch(tag, { consent: 'granted', events: pageView });
    expect(granted.json).toEqual({ accepted: 1 });
    expect(cookieOf(granted)).toMatch(/^muid=[0-9a-f-]{36};/);
    const stored = await allEvents(server, tag.merchantId);
    expect(stored.map((e) => e.consent)).toEqual(['granted']);
  });

  it('cookieless: the daily hash of merchant, IP and user agent; no cookie, a body muid ignored, a cookie cleared', async () => {
    const tag = await tagWith({ consentMode: 'opt-in' });
    const first = await batch(tag, { events: [{ event_name: 'PageView', muid: 'body-muid' }] });
    expect(first.json).toEqual({ accepted: 1 });
    expect(cookieOf(first)).toBeUndefined();
    await batch(tag, { consent: 'cookieless', events: pageView });
    await batch(tag, { events: pageView }, { 'user-agent': 'Mozilla/5.0 (Another browser)' });
    // A muid cookie from before is cleared by the first cookieless batch.
    const cleared = await batch(tag, { events: pageView }, { cookie: 'muid=0123456789abcdef' });
    expect(cookieOf(cleared)).toMatch(/^muid=; Max-Age=0;/);
    const stored = await allEvents(server, tag.merchantId, { sortOrder: 'asc' });
    expect(stored.map((e) => e.consent)).toEqual(['cookieless', 'cookieless', 'cookieless', 'cookieless']);
    const [a, b, c, d] = stored.map((e) => e.muid as string);
    expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(d).toBe(a);
    // Another merchant: another hash for the same browser.
    const another = await tagWith({ consentMode: 'opt-in' });
    await batch(another, { events: pageView });
    expect((await allEvents(server, another.merchantId))[0]?.muid).not.toBe(a);
  });

  it('opt-out: implied with a cookie; Sec-GPC counts as denied; denied clears the cookie', async () => {
    const tag = await tagWith({ consentMode: 'opt-out' });
    const implied = await batch(tag, { consent: 'implied', events: pageView });
    expect(cookieOf(implied)).toMatch(/^muid=/);
    const gpc = await batch(tag, { consent: 'implied', events: pageView }, { 'sec-gpc': '1' });
    expect(gpc.json).toEqual({ accepted: 0 });
    expect(cookieOf(gpc)).toBeUndefined();
    const denied = await batch(tag, { consent: 'denied', events: [] }, { cookie: 'muid=0123456789abcdef' });
    expect(denied.status).toBe(202);
    expect(denied.json).toEqual({ accepted: 0 });
    expect(cookieOf(denied)).toMatch(/^muid=; Max-Age=0; Domain=/);
    await patch(tag.tagId, { respectGpc: false });
    const ignored = await batch(tag, { events: pageView }, { 'sec-gpc': '1' });
    expect(ignored.json).toEqual({ accepted: 1 });
    expect((await allEvents(server, tag.merchantId)).map((e) => e.consent)).toEqual(['implied', 'implied']);
  });

  it('a PATCH applies to the next batch', async () => {
    const tag = await tagWith();
    expect((await batch(tag, { events: pageView })).json).toEqual({ accepted: 1 });
    await patch(tag.tagId, { consentMode: 'opt-in', cookieless: false });
    expect((await batch(tag, { events: pageView })).json).toEqual({ accepted: 0 });
  });

  it('refuses a malformed batch with 400 { message, code }', async () => {
    const tag = await tagWith();
    for (const body of [{ consent: 'maybe', events: pageView }, { consent: 'granted', events: [] }, { events: [] }]) {
      const res = await batch(tag, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json).toEqual({ message: expect.any(String), code: 'VALIDATION_ERROR' });
    }
  });
});

describe('the consent state in the event list and the export', () => {
  it('lists and exports each event with the state it was collected under', async () => {
    const tag = await tagWith({ consentMode: 'opt-in' });
    await collectOk(server, tag.tagId, [{ id: 'e1', event_name: 'Purchase' }]);
    await batch(tag, { consent: 'granted', events: [{ id: 'e2', event_name: 'PageView' }] });
    await batch(tag, { events: [{ id: 'e3', event_name: 'PageView' }] });
    const listed = await allEvents(server, tag.merchantId);
    const byId = Object.fromEntries(listed.map((e) => [e.id, e.consent]));
    expect(byId).toEqual({ e1: 'not_required', e2: 'granted', e3: 'cookieless' });

    const res = await api(server, key()).get(`/v1/partners/events/export?merchantId=${tag.merchantId}`);
    expect(res.status).toBe(200);
    const lines = res.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const exported = lines.filter((line) => 'id' in line);
    // Exactly the list's events, consent included.
    expect(exported.sort((x, y) => x.id.localeCompare(y.id))).toEqual(
      [...listed].sort((x, y) => x.id.localeCompare(y.id)),
    );
  });
});
