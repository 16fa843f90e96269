import { http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  MerchantClient,
  type MerchantSession,
  PartnerClient,
  PartnerError,
  type StatsSummary,
} from '../src/index.js';
import { API_KEY, BASE_URL, makeClient, reply, sequence, server, useMsw } from './helpers.js';

useMsw();
afterEach(() => vi.restoreAllMocks());

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const TAG_ID = '9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f';
const RANGE = { startDate: '2026-11-01', endDate: '2026-11-07', timezone: 'UTC' };
const TOTALS = {
  events: 3,
  visitors: 2,
  pageviews: 2,
  purchases: 1,
  revenue: [],
  visits: 2,
  bounceRate: 0,
  visitDuration: 10,
  viewsPerVisit: 1,
  botEvents: 0,
  goals: [],
};
const SUMMARY: StatsSummary = { range: RANGE, totals: TOTALS, previous: null };
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

/** A summary handler answering 200 to the tokens in `valid`, 401 to any other; records the tokens sent. */
function summaryFor(valid: Set<string>): string[] {
  const sent: string[] = [];
  server.use(
    http.get(`${BASE_URL}/v1/partners/stats/summary`, ({ request }) => {
      const token = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
      sent.push(token);
      return valid.has(token)
        ? reply(SUMMARY)
        : reply(
            { message: 'Invalid, expired or revoked merchant session token', code: 'UNAUTHORIZED' },
            { status: 401 },
          );
    }),
  );
  return sent;
}

describe('client.merchants.sessions.create (partner side)', () => {
  it('sends POST /v1/partners/merchant/{merchantId}/sessions with the origins and lifetime, keyed', async () => {
    const session: MerchantSession = {
      token: 'ms_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      merchantId: MERCHANT_ID,
      allowedOrigins: ['https://admin.partner.example'],
      expiresAt: inSeconds(600),
    };
    const { handler, seen } = sequence('post', `/v1/partners/merchant/${MERCHANT_ID}/sessions`, [
      () => reply(session, { status: 201 }),
    ]);
    server.use(handler);
    const created = await makeClient().merchants.sessions.create({
      merchantId: MERCHANT_ID,
      allowedOrigins: ['https://admin.partner.example'],
      lifetimeSeconds: 600,
    });
    expect(created).toEqual(session);
    expect(seen[0]?.body).toEqual({ allowedOrigins: ['https://admin.partner.example'], lifetimeSeconds: 600 });
    expect(seen[0]?.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(seen[0]?.headers.get('idempotency-key')).toBeTruthy();
  });
});

describe('MerchantClient (browser side)', () => {
  it('reads stats and tag status with the session token, never a key', async () => {
    const sent = summaryFor(new Set(['ms_one']));
    server.use(http.get(`${BASE_URL}/v1/partners/tag/${TAG_ID}`, () => reply({ tagId: TAG_ID })));
    const client = new MerchantClient({ baseURL: BASE_URL, sessionToken: 'ms_one', expiresAt: inSeconds(900) });
    expect(await client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE })).toEqual(SUMMARY);
    expect(await client.tags.retrieve(TAG_ID)).toEqual({ tagId: TAG_ID });
    expect(sent).toEqual(['ms_one']);
    // Only what a session may call exists on it.
    expect(Object.keys(client).sort()).toEqual(['baseURL', 'maxRetries', 'stats', 'tags', 'timeout']);
    expect('generate' in client.tags).toBe(false);
  });

  it('renews the session shortly before it expires, through refreshSession, and sends the new token', async () => {
    const sent = summaryFor(new Set(['ms_old', 'ms_new']));
    const refreshSession = vi.fn(async () => ({ token: 'ms_new', expiresAt: inSeconds(1800) }));
    const client = new MerchantClient({
      baseURL: BASE_URL,
      sessionToken: 'ms_old',
      expiresAt: inSeconds(900),
      refreshSession,
    });
    await client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE });
    expect(refreshSession).not.toHaveBeenCalled();
    const realNow = Date.now();
    // 20 s before the first token's expiry: inside the renewal margin.
    vi.spyOn(Date, 'now').mockReturnValue(realNow + 880_000);
    await Promise.all([
      client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE }),
      client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE }),
    ]);
    expect(refreshSession).toHaveBeenCalledTimes(1);
    expect(sent).toEqual(['ms_old', 'ms_new', 'ms_new']);
  });

  it('fetches its first session through refreshSession when given no token', async () => {
    const sent = summaryFor(new Set(['ms_first']));
    const refreshSession = vi.fn(async () => ({ token: 'ms_first', expiresAt: inSeconds(900) }));
    const client = new MerchantClient({ baseURL: BASE_URL, refreshSession });
    await client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE });
    expect(refreshSession).toHaveBeenCalledTimes(1);
    expect(sent).toEqual(['ms_first']);
  });

  it('renews once after a 401 and repeats the call with the new token', async () => {
    const sent = summaryFor(new Set(['ms_new']));
    const refreshSession = vi.fn(async () => ({ token: 'ms_new', expiresAt: inSeconds(900) }));
    const client = new MerchantClient({
      baseURL: BASE_URL,
      sessionToken: 'ms_revoked',
      expiresAt: inSeconds(900),
      refreshSession,
    });
    expect(await client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE })).toEqual(SUMMARY);
    expect(sent).toEqual(['ms_revoked', 'ms_new']);
    expect(refreshSession).toHaveBeenCalledTimes(1);
  });

  it('gives up with AuthenticationError when the renewed token is refused too (one renewal per call)', async () => {
    const sent = summaryFor(new Set());
    const refreshSession = vi.fn(async () => ({ token: 'ms_also_bad', expiresAt: inSeconds(900) }));
    const client = new MerchantClient({ baseURL: BASE_URL, sessionToken: 'ms_bad', refreshSession, maxRetries: 0 });
    await expect(client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    expect(sent).toEqual(['ms_bad', 'ms_also_bad']);
    expect(refreshSession).toHaveBeenCalledTimes(1);
  });

  it('without refreshSession, a 401 is the caller’s AuthenticationError at once', async () => {
    const sent = summaryFor(new Set());
    const client = new MerchantClient({ baseURL: BASE_URL, sessionToken: 'ms_gone' });
    await expect(client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    expect(sent).toEqual(['ms_gone']);
  });

  it('refuses to start without a session, or with an API key', () => {
    expect(() => new MerchantClient({ baseURL: BASE_URL })).toThrow(PartnerError);
    expect(() => new MerchantClient({ baseURL: BASE_URL, sessionToken: API_KEY })).toThrow(/PartnerClient/);
  });
});

describe('PartnerClient: servers with a key', () => {
  it('refuses a session token (it goes to MerchantClient)', () => {
    expect(() => makeClient({ apiKey: 'ms_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).toThrow(/MerchantClient/);
  });

  it('refuses to run in a browser page with a key unless told dangerouslyAllowBrowser', () => {
    const scope = globalThis as { window?: unknown; document?: unknown };
    scope.window = globalThis;
    scope.document = {};
    try {
      expect(() => makeClient()).toThrow(/MerchantClient/);
      expect(makeClient({ dangerouslyAllowBrowser: true })).toBeInstanceOf(PartnerClient);
      // A MerchantClient is what a page uses.
      expect(new MerchantClient({ baseURL: BASE_URL, sessionToken: 'ms_x' })).toBeInstanceOf(MerchantClient);
    } finally {
      delete scope.window;
      delete scope.document;
    }
  });
});
