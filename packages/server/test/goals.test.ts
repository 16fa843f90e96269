// Goals: create, list and delete, their bounds, and who may reach them.
import { GOALS_MAX } from '@partner/shared-schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestPartner, type TestServer } from '../src/testing/index.js';
import { api } from './helpers/api.js';
import { createMerchant } from './helpers/fixtures.js';
import { createSession } from './sessions/session-helpers.js';

let server: TestServer;
let other: TestPartner;

beforeAll(async () => {
  server = await startTestServer();
  other = await server.createPartner('Other partner');
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const goalsOf = (merchantId: string) => `/v1/partners/merchant/${merchantId}/goals`;

describe('goals', () => {
  it('creates event and path goals, lists them oldest first, deletes one', async () => {
    const merchantId = await createMerchant(server);
    const partner = api(server, server.partner.apiKey);
    const signUp = await partner.post(goalsOf(merchantId), { name: ' Signed up ', eventName: 'SignUp' });
    expect(signUp.status, signUp.text).toBe(201);
    expect(signUp.body).toEqual({
      goalId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      merchantId,
      name: 'Signed up',
      eventName: 'SignUp',
      pathPattern: null,
      createdAt: expect.any(String),
    });
    const checkout = await partner.post(goalsOf(merchantId), { name: 'Checkout', pathPattern: '/checkout/**' });
    expect(checkout.status).toBe(201);
    const listed = await partner.get(goalsOf(merchantId));
    expect(listed.body.goals.map((g: { name: string }) => g.name)).toEqual(['Signed up', 'Checkout']);
    const gone = await partner.request('DELETE', `${goalsOf(merchantId)}/${signUp.body.goalId}`);
    expect(gone.status).toBe(204);
    expect((await partner.get(goalsOf(merchantId))).body.goals).toEqual([checkout.body]);
    const again = await partner.request('DELETE', `${goalsOf(merchantId)}/${signUp.body.goalId}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ code: 'GOAL_NOT_FOUND', message: expect.any(String) });
  });

  it.each([
    [{ name: 'both', eventName: 'SignUp', pathPattern: '/a' }, 'exactly one'],
    [{ name: 'neither' }, 'exactly one'],
    [{ name: 'relative', pathPattern: 'checkout' }, 'must start with /'],
    [{ name: '', eventName: 'SignUp' }, 'name'],
  ])('refuses %j with a 400 naming the problem', async (body, problem) => {
    const merchantId = await createMerchant(server);
    const res = await api(server, server.partner.apiKey).post(goalsOf(merchantId), body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining(problem) });
  });

  it(`holds at most ${GOALS_MAX} goals per merchant, even asked at once`, async () => {
    const merchantId = await createMerchant(server);
    const partner = api(server, server.partner.apiKey);
    const answers = await Promise.all(
      Array.from({ length: GOALS_MAX + 5 }, (_, i) =>
        partner.post(goalsOf(merchantId), { name: `g${i}`, eventName: `E${i}` }),
      ),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(GOALS_MAX);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    expect(answers.find((res) => res.status === 409)?.body).toEqual({
      code: 'LIMIT_EXCEEDED',
      message: expect.stringContaining(`${GOALS_MAX} goals`),
    });
    expect((await partner.get(goalsOf(merchantId))).body.goals).toHaveLength(GOALS_MAX);
  }, 60_000);

  it("answers another partner's merchant and goal as missing", async () => {
    const merchantId = await createMerchant(server);
    const mine = await api(server, server.partner.apiKey).post(goalsOf(merchantId), { name: 'g', eventName: 'E' });
    const theirs = api(server, other.apiKey);
    expect((await theirs.get(goalsOf(merchantId))).body.code).toBe('MERCHANT_NOT_FOUND');
    expect((await theirs.post(goalsOf(merchantId), { name: 'x', eventName: 'E' })).body.code).toBe(
      'MERCHANT_NOT_FOUND',
    );
    const otherMerchant = await createMerchant(server, other.apiKey);
    const cross = await theirs.request('DELETE', `${goalsOf(otherMerchant)}/${mine.body.goalId}`);
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe('GOAL_NOT_FOUND');
  });

  it('a merchant session lists its merchant’s goals and changes none', async () => {
    const merchantId = await createMerchant(server);
    await api(server, server.partner.apiKey).post(goalsOf(merchantId), { name: 'g', eventName: 'E' });
    const session = await createSession(server, server.partner.apiKey, merchantId);
    const browser = api(server, session.token);
    expect((await browser.get(goalsOf(merchantId))).body.goals).toHaveLength(1);
    const refused = await browser.post(goalsOf(merchantId), { name: 'x', eventName: 'E' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('SESSION_SCOPE');
  });
});
