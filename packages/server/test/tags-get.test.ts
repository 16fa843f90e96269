import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';
import { collectOk, generateTag, MISSING_ID, preverifiedTag, publishCname } from './helpers/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  // The monitor stays off here: these tests read exactly what generate and verify wrote.
  server = await startTestServer({ env: { TAG_MONITOR: 'off', TAG_RECHECK_SCHEDULE: '1m,5m' } });
});
afterAll(() => server?.close());

const get = (tagId: string, key = server.partner.apiKey) => api(server, key).get(`/v1/partners/tag/${tagId}`);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('GET /v1/partners/tag/{tagId}', () => {
  it('answers a fresh custom tag in full, with its first re-check scheduled', async () => {
    const tag = await generateTag(server);
    const res = await get(tag.tagId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tagId: tag.tagId,
      merchantId: tag.merchantId,
      livemode: true,
      hostname: `${tag.record.name}.${tag.domain}`,
      domain: tag.domain,
      domainType: 'custom',
      status: 'inactive',
      isConnected: false,
      isVerified: false,
      record: tag.record,
      createdAt: expect.stringMatching(ISO),
      verifiedAt: null,
      firstEventAt: null,
      lastEventAt: null,
      lastCheck: null,
      nextCheckAt: expect.stringMatching(ISO),
      consentMode: 'none',
      respectGpc: true,
      cookieless: false,
    });
    // TAG_RECHECK_SCHEDULE=1m,5m: the first re-check is a minute after generate.
    const delay = Date.parse(res.body.nextCheckAt) - Date.parse(res.body.createdAt);
    expect(delay).toBeGreaterThan(50_000);
    expect(delay).toBeLessThan(70_000);
  });

  it('shows the last check of a failed verify, with what DNS answered', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag, 'elsewhere.example.net');
    expect(
      (
        await api(server, server.partner.apiKey).post('/v1/partners/tag/verify', {
          tagId: tag.tagId,
          subdomain: tag.domain,
        })
      ).status,
    ).toBe(422);
    const res = await get(tag.tagId);
    expect(res.body).toMatchObject({ status: 'inactive', isConnected: false, isVerified: false, verifiedAt: null });
    expect(res.body.lastCheck).toEqual({
      checkedAt: expect.stringMatching(ISO),
      ok: false,
      reason: 'WRONG_TARGET',
      found: [{ type: 'CNAME', name: `${tag.record.name}.${tag.domain}`, value: 'elsewhere.example.net' }],
    });
  });

  it('shows a verified tag, then its first events', async () => {
    const tag = await generateTag(server);
    publishCname(server, tag);
    expect(
      (
        await api(server, server.partner.apiKey).post('/v1/partners/tag/verify', {
          tagId: tag.tagId,
          subdomain: tag.domain,
        })
      ).status,
    ).toBe(200);
    const verified = (await get(tag.tagId)).body;
    expect(verified).toMatchObject({
      status: 'waiting_for_events',
      isConnected: true,
      isVerified: true,
      verifiedAt: expect.stringMatching(ISO),
      lastCheck: {
        ok: true,
        found: [{ type: 'CNAME', name: `${tag.record.name}.${tag.domain}`, value: tag.record.value }],
      },
      nextCheckAt: expect.stringMatching(ISO),
    });
    expect(verified.lastCheck.reason).toBeUndefined();
    await collectOk(server, tag.tagId, [{ event_name: 'PageView' }]);
    const live = (await get(tag.tagId)).body;
    expect(live).toMatchObject({
      status: 'active',
      verifiedAt: verified.verifiedAt,
      firstEventAt: expect.stringMatching(ISO),
      lastEventAt: expect.stringMatching(ISO),
    });
  });

  it("answers a preverified tag with its partner's collector host and no checks", async () => {
    const partner = await server.createPartner();
    const tag = await preverifiedTag(server, partner);
    const res = await get(tag.tagId, partner.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      domainType: 'preverified',
      status: 'active',
      hostname: `${partner.record.name}.${partner.domain}`,
      record: tag.record,
      lastCheck: null,
      nextCheckAt: null,
    });
  });

  it("answers 404 TAG_NOT_FOUND alike for a missing tag and another partner's merchant's tag", async () => {
    const other = await server.createPartner();
    const theirs = await generateTag(server, { key: other.apiKey });
    const missing = await get(MISSING_ID);
    const foreign = await get(theirs.tagId);
    expect(missing.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(missing.body).toEqual({ code: 'TAG_NOT_FOUND', message: `No tag ${MISSING_ID}` });
    expect(foreign.body).toEqual({ code: 'TAG_NOT_FOUND', message: `No tag ${theirs.tagId}` });
    expect(foreign.text).not.toContain(theirs.domain);
    expect((await get(theirs.tagId, other.apiKey)).status).toBe(200);
  });

  it('answers 400 VALIDATION_ERROR for a tagId that is not a UUID, 401 without a key', async () => {
    const bad = await get('not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect((await api(server, undefined).get(`/v1/partners/tag/${MISSING_ID}`)).status).toBe(401);
  });

  it('is the same over tRPC (tag.get), with the same isolation', async () => {
    const tag = await generateTag(server);
    const rest = (await get(tag.tagId)).body;
    expect(await server.caller(server.partner.apiKey).tag.get({ tagId: tag.tagId })).toEqual(rest);
    const other = await server.createPartner();
    await expect(server.caller(other.apiKey).tag.get({ tagId: tag.tagId })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
