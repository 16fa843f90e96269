import type { AnyTRPCProcedure } from '@trpc/server';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchantSessions } from '../../src/db/schema/index.js';
import { hashApiKey } from '../../src/kernel/bearer-tokens.js';
import { appRouter } from '../../src/routes/_app.js';
import type { Meta } from '../../src/routes/procedures.js';
import { failureOf, type InProcessApp, startInProcessApp } from '../../src/testing/index.js';

// merchant.sessions.create and what a session token may call, through createCaller (the HTTP side,
// CORS and revocation: test/sessions/).
let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcessApp({ env: { RATE_LIMIT_PER_MINUTE: '40', SESSION_RATE_LIMIT_PER_MINUTE: '3' } });
});
afterAll(() => app?.close());

const TOKEN = /^ms_[A-Za-z0-9_-]{32}$/;
const today = new Date().toISOString().slice(0, 10);
const range = { startDate: today, endDate: today, timezone: 'UTC' };

async function partnerWithMerchant() {
  const partner = await app.createPartner();
  const caller = app.caller(partner.apiKey);
  const { merchantId } = await caller.merchant.create({ name: 'Shop' });
  return { partner, caller, merchantId };
}

describe('merchant.sessions.create', () => {
  it('answers { token, merchantId, allowedOrigins, expiresAt } and stores only the token’s hash', async () => {
    const { caller, merchantId } = await partnerWithMerchant();
    const before = Date.now();
    const session = await caller.merchant.sessions.create({
      merchantId,
      allowedOrigins: ['https://Admin.Partner.example:443', 'http://localhost:5173', 'https://admin.partner.example'],
    });
    expect(Object.keys(session).sort()).toEqual(['allowedOrigins', 'expiresAt', 'merchantId', 'token']);
    expect(session.token).toMatch(TOKEN);
    expect(session.merchantId).toBe(merchantId);
    // As browsers send Origin: lower-cased, default port dropped, each once.
    expect(session.allowedOrigins).toEqual(['https://admin.partner.example', 'http://localhost:5173']);
    const lifetime = Date.parse(session.expiresAt) - before;
    expect(lifetime).toBeGreaterThan(895_000);
    expect(lifetime).toBeLessThan(905_000);
    const rows = await app.deps.db.select().from(merchantSessions).where(eq(merchantSessions.merchantId, merchantId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(hashApiKey(session.token));
    expect(JSON.stringify(rows)).not.toContain(session.token);
  });

  it('takes a lifetime of 1..3600 seconds', async () => {
    const { caller, merchantId } = await partnerWithMerchant();
    const hour = await caller.merchant.sessions.create({
      merchantId,
      allowedOrigins: ['https://a.example'],
      lifetimeSeconds: 3600,
    });
    expect(Date.parse(hour.expiresAt) - Date.now()).toBeGreaterThan(3_590_000);
    for (const lifetimeSeconds of [0, 3601, 1.5]) {
      const failure = await failureOf(
        caller.merchant.sessions.create({ merchantId, allowedOrigins: ['https://a.example'], lifetimeSeconds }),
      );
      expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
      expect(failure.message).toContain('lifetimeSeconds');
    }
  });

  it.each([
    ['none', []],
    ['a path', ['https://a.example/admin']],
    ['a wildcard', ['*']],
    ['plain http off loopback', ['http://a.example']],
    ['another scheme', ['ftp://a.example']],
    ['credentials', ['https://user@a.example']],
    ['a query', ['https://a.example?x=1']],
    ['no scheme', ['a.example']],
    ['eleven origins', Array.from({ length: 11 }, (_, i) => `https://a${i}.example`)],
  ])('refuses allowedOrigins with %s: 400 VALIDATION_ERROR, nothing stored', async (_, allowedOrigins) => {
    const { caller, merchantId } = await partnerWithMerchant();
    const failure = await failureOf(caller.merchant.sessions.create({ merchantId, allowedOrigins }));
    expect(failure).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(failure.message).toContain('allowedOrigins');
    const rows = await app.deps.db.select().from(merchantSessions).where(eq(merchantSessions.merchantId, merchantId));
    expect(rows).toEqual([]);
  });

  it('answers 404 MERCHANT_NOT_FOUND for another partner’s merchant', async () => {
    const { merchantId } = await partnerWithMerchant();
    const other = await app.createPartner();
    const failure = await failureOf(
      app.caller(other.apiKey).merchant.sessions.create({ merchantId, allowedOrigins: ['https://a.example'] }),
    );
    expect(failure).toMatchObject({ status: 404, code: 'MERCHANT_NOT_FOUND' });
  });

  it('purges the partner’s sessions expired over a day ago when it creates one', async () => {
    const { caller, merchantId } = await partnerWithMerchant();
    const old = await caller.merchant.sessions.create({ merchantId, allowedOrigins: ['https://a.example'] });
    await app.deps.db.execute(
      sql`update merchant_sessions set expires_at = now() - interval '2 days' where token_hash = ${hashApiKey(old.token)}`,
    );
    await caller.merchant.sessions.create({ merchantId, allowedOrigins: ['https://a.example'] });
    const hashes = (
      await app.deps.db.select().from(merchantSessions).where(eq(merchantSessions.merchantId, merchantId))
    ).map((row) => row.tokenHash);
    expect(hashes).toHaveLength(1);
    expect(hashes).not.toContain(hashApiKey(old.token));
  });
});

describe('a session token through createCaller', () => {
  it('calls only the procedures whose meta lets sessions in; every other is 403 SESSION_SCOPE', async () => {
    const { caller, merchantId } = await partnerWithMerchant();
    // Refused calls count too: a new session every 3 calls (SESSION_RATE_LIMIT_PER_MINUTE).
    let token = '';
    let calls = 0;
    const procedures = appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>;
    const open: string[] = [];
    for (const [path, procedure] of Object.entries(procedures)) {
      const meta = (procedure._def.meta ?? {}) as Meta;
      if (meta.sessionAccess) {
        open.push(path);
        continue;
      }
      if (!meta.openapi?.protect || procedure._def.type === 'subscription') continue;
      if (calls++ % 3 === 0) {
        ({ token } = await caller.merchant.sessions.create({ merchantId, allowedOrigins: ['https://a.example'] }));
      }
      let target: unknown = app.caller(token);
      for (const part of path.split('.')) target = (target as Record<string, unknown>)[part];
      const failure = await failureOf((target as (input: unknown) => Promise<unknown>)({ merchantId }));
      expect({ path, status: failure.status, code: failure.code }).toEqual({
        path,
        status: 403,
        code: 'SESSION_SCOPE',
      });
    }
    expect(open.sort()).toEqual([
      'merchant.goals.list',
      'stats.attribution',
      'stats.breakdown',
      'stats.funnel',
      'stats.realtime',
      'stats.summary',
      'stats.timeseries',
      'tag.get',
    ]);
  });

  it('has a budget of its own and charges the key that created it only for what it admitted', async () => {
    // RATE_LIMIT_PER_MINUTE 40 per key, SESSION_RATE_LIMIT_PER_MINUTE 3 per session (beforeAll).
    const { caller, merchantId } = await partnerWithMerchant(); // the key: 1 point (merchant.create)
    const a = await caller.merchant.sessions.create({ merchantId, allowedOrigins: ['https://a.example'] }); // 2
    const b = await caller.merchant.sessions.create({ merchantId, allowedOrigins: ['https://a.example'] }); // 3
    const first = app.caller(a.token);
    for (let i = 0; i < 3; i++) await first.stats.summary({ merchantId, ...range }); // key: 6
    const overSession = await failureOf(first.stats.summary({ merchantId, ...range })); // key: still 6
    expect(overSession).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(overSession.message).toContain('per merchant session');
    const second = app.caller(b.token);
    await second.stats.summary({ merchantId, ...range }); // key: 7
    for (let i = 7; i < 40; i++) await caller.merchant.list({}); // key: 40, spent
    const overKey = await failureOf(second.stats.summary({ merchantId, ...range }));
    expect(overKey).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(overKey.message).toContain('per API key');
  });
});
