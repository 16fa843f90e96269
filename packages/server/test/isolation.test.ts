import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestPartner, type TestServer } from '../src/testing/index.js';
import { type ApiResponse, api, type Json } from './helpers/api.js';
import {
  collectOk,
  createMerchant,
  type GeneratedTag,
  generateTag,
  listEvents,
  listedMerchant,
  MISSING_ID,
  preverifiedTag,
  publishCname,
  uniqueDomain,
} from './helpers/fixtures.js';

const RIVAL = 'Rival Platform GmbH';

let server: TestServer;
/** The caller. */
let me: TestPartner;
/** Another partner whose resources the caller must not reach. */
let other: TestPartner;

interface Resources {
  merchantId: string;
  customTag: GeneratedTag;
  liveTag: GeneratedTag;
}
let mine: Resources;
let theirs: Resources;

async function resourcesOf(partner: TestPartner): Promise<Resources> {
  const merchantId = await createMerchant(server, partner.apiKey, `${partner.partnerId} merchant`);
  const customTag = await generateTag(server, { key: partner.apiKey, merchantId });
  publishCname(server, customTag);
  const liveTag = await preverifiedTag(server, partner);
  await collectOk(server, liveTag.tagId, [{ id: `secret-${partner.partnerId}`, event_name: 'Purchase' }]);
  return { merchantId, customTag, liveTag };
}

beforeAll(async () => {
  server = await startTestServer();
  me = await server.createPartner('Me');
  other = await server.createPartner(RIVAL);
  mine = await resourcesOf(me);
  theirs = await resourcesOf(other);
});
afterAll(() => server?.close());

type Whose = 'own' | "other partner's" | 'missing';
const WHOSE: Whose[] = ['own', "other partner's", 'missing'];

function pick<T>(whose: Whose, own: T, foreign: T, missing: T): T {
  return whose === 'own' ? own : whose === 'missing' ? missing : foreign;
}

/** Endpoint x whose resource -> expected status and code. */
const MATRIX: Array<{
  endpoint: string;
  send(whose: Whose): Promise<ApiResponse>;
  expected: Record<Whose, { status: number; code?: string }>;
}> = [
  {
    endpoint: 'POST /v1/partners/tag/generate',
    send: (whose) =>
      api(server, me.apiKey).post('/v1/partners/tag/generate', {
        merchantId: pick(whose, mine.merchantId, theirs.merchantId, MISSING_ID),
        domain: uniqueDomain(),
      }),
    expected: {
      own: { status: 200 },
      "other partner's": { status: 404, code: 'MERCHANT_NOT_FOUND' },
      missing: { status: 404, code: 'MERCHANT_NOT_FOUND' },
    },
  },
  {
    endpoint: 'POST /v1/partners/tag/verify',
    send: (whose) => {
      const tag = pick(whose, mine.customTag, theirs.customTag, { ...mine.customTag, tagId: MISSING_ID });
      return api(server, me.apiKey).post('/v1/partners/tag/verify', { tagId: tag.tagId, subdomain: tag.domain });
    },
    expected: {
      own: { status: 200 },
      "other partner's": { status: 403, code: 'ACCESS_DENIED' },
      missing: { status: 404, code: 'TAG_NOT_FOUND' },
    },
  },
  {
    endpoint: 'GET /v1/partners/events',
    send: (whose) => listEvents(server, pick(whose, mine.merchantId, theirs.merchantId, MISSING_ID), {}, me.apiKey),
    expected: {
      own: { status: 200 },
      "other partner's": { status: 404, code: 'MERCHANT_NOT_FOUND' },
      missing: { status: 404, code: 'MERCHANT_NOT_FOUND' },
    },
  },
  {
    endpoint: 'POST /v1/collect (public, by tag)',
    send: (whose) =>
      api(server).post('/v1/collect', {
        tagId: pick(whose, mine.liveTag.tagId, theirs.liveTag.tagId, MISSING_ID),
        events: [{ event_name: 'PageView' }],
      }),
    expected: {
      own: { status: 202 },
      // Collection is keyed by tag, not by partner: any live tag takes events.
      "other partner's": { status: 202 },
      missing: { status: 404, code: 'TAG_NOT_FOUND' },
    },
  },
];

describe.each(MATRIX)('$endpoint', ({ send, expected }) => {
  it.each(WHOSE)('%s resource', async (whose) => {
    const res = await send(whose);
    const want = expected[whose];
    expect(res.status).toBe(want.status);
    if (want.code) {
      expect(res.body).toEqual({ code: want.code, message: expect.any(String) });
      // Nothing about the other partner leaks.
      expect(res.text).not.toContain(other.partnerId);
      expect(res.text).not.toContain(other.domain);
      expect(res.text).not.toContain(RIVAL);
    }
  });
});

describe('other partner resources are indistinguishable from missing ones', () => {
  it('generate: same status and body, apart from the id in the message', async () => {
    const foreign = await MATRIX[0]!.send("other partner's");
    const missing = await MATRIX[0]!.send('missing');
    expect(foreign.status).toBe(missing.status);
    expect(foreign.body).toEqual({
      ...missing.body,
      message: missing.body.message.replace(MISSING_ID, theirs.merchantId),
    });
  });

  it('events: same status and body, apart from the id in the message', async () => {
    const foreign = await MATRIX[2]!.send("other partner's");
    const missing = await MATRIX[2]!.send('missing');
    expect(foreign.status).toBe(missing.status);
    expect(foreign.body).toEqual({
      ...missing.body,
      message: missing.body.message.replace(MISSING_ID, theirs.merchantId),
    });
  });
});

describe('merchant list and create', () => {
  it("lists only the caller's merchants, never the other partner's", async () => {
    const res = await api(server, me.apiKey).get('/v1/partners/merchant?limit=100');
    expect(res.status).toBe(200);
    const ids = res.body.merchants.map((m: Json) => m.merchantId);
    expect(ids).toContain(mine.merchantId);
    expect(ids).not.toContain(theirs.merchantId);
    expect(ids).not.toContain(theirs.liveTag.merchantId);
    expect(res.text).not.toContain(theirs.customTag.tagId);
    expect(res.text).not.toContain(theirs.customTag.domain);
  });

  it('a created merchant belongs to its creator only', async () => {
    const merchantId = await createMerchant(server, me.apiKey, 'Fresh');
    const theirList = await api(server, other.apiKey).get('/v1/partners/merchant?limit=100');
    expect(theirList.body.merchants.map((m: Json) => m.merchantId)).not.toContain(merchantId);
    const generate = await api(server, other.apiKey).post('/v1/partners/tag/generate', {
      merchantId,
      domain: uniqueDomain(),
    });
    expect(generate.status).toBe(404);
  });
});

describe('failed cross-partner calls change nothing', () => {
  it("the other partner's merchant and tags are untouched", async () => {
    await MATRIX[0]!.send("other partner's");
    await MATRIX[1]!.send("other partner's");
    const merchant = await listedMerchant(server, theirs.merchantId, other.apiKey);
    expect(merchant.tags).toEqual([
      expect.objectContaining({
        tagId: theirs.customTag.tagId,
        status: 'inactive',
        isConnected: false,
        isVerified: false,
      }),
    ]);
    const events = await listEvents(server, theirs.liveTag.merchantId, {}, other.apiKey);
    expect(events.body.events.map((e: Json) => e.event_name)).toContain('Purchase');
  });
});
