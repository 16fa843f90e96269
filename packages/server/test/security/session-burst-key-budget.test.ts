import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { type ApiResponse, api } from '../helpers/api.js';
import { createMerchant } from '../helpers/fixtures.js';
import { createSession, ORIGIN, summaryPath } from '../sessions/session-helpers.js';

/**
 * Issue 51, finding 6: a merchant session spent its partner's API-key budget. Calls were charged to
 * the key before the session's own limit: 597 session calls in 1.5 s (120 admitted, 477 refused
 * by the session limit but charged to the key) left the partner's next call, for another
 * merchant, 429 for 59 s. A session's call is now charged to the session first, and to the key
 * only when the session admitted it.
 */
const KEY_LIMIT = 40;
const SESSION_LIMIT = 6;
const BURST = 60;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: { RATE_LIMIT_PER_MINUTE: String(KEY_LIMIT), SESSION_RATE_LIMIT_PER_MINUTE: String(SESSION_LIMIT) },
  });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const remaining = (res: ApiResponse) => Number(res.headers.get('ratelimit-remaining'));

describe("a session's burst past its limit", () => {
  it("costs the partner's key only the calls the session admitted", async () => {
    const key = api(server, server.partner.apiKey);
    const shop = await createMerchant(server);
    const otherShop = await createMerchant(server);
    const session = await createSession(server, server.partner.apiKey, shop);

    const before = await key.get(`/v1/partners/merchant/${otherShop}`);
    expect(before.status).toBe(200);
    const budgetBefore = remaining(before);

    const page = api(server, session.token);
    // Two at a time: a session may have two statistics reads in flight (a third is refused by the
    // read gate, not by the rate limit this test is about).
    const burst: ApiResponse[] = [];
    for (let i = 0; i < BURST; i += 2) {
      burst.push(...(await Promise.all([0, 1].map(() => page.get(summaryPath(shop), { origin: ORIGIN })))));
    }
    const admitted = burst.filter((res) => res.status === 200);
    const refused = burst.filter((res) => res.status === 429);
    expect([admitted.length, refused.length]).toEqual([SESSION_LIMIT, BURST - SESSION_LIMIT]);
    for (const res of refused) {
      expect(res.body).toEqual({
        message: expect.stringContaining('per merchant session'),
        code: 'RATE_LIMITED',
      });
    }
    // The page sees its session's budget, not the key's.
    expect(admitted.map((res) => res.headers.get('ratelimit-limit'))).toEqual(
      Array(SESSION_LIMIT).fill(String(SESSION_LIMIT)),
    );

    const after = await key.get(`/v1/partners/merchant/${otherShop}`);
    console.info(
      `session-burst-key-budget: ${BURST} session calls (${admitted.length} admitted); the key's next call ${after.status}, remaining ${budgetBefore} -> ${remaining(after)}`,
    );
    expect(after.status).toBe(200);
    // This call and the admitted session calls, nothing for the refused ones.
    expect(budgetBefore - remaining(after)).toBe(SESSION_LIMIT + 1);
  });
});
