import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/read-rows.js';
import { startTestServer, type TestPartner, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { collectOk, preverifiedTag } from '../helpers/fixtures.js';

// Event retention through the real transport: periods set over REST (merchant, partner default)
// and the server's EVENT_RETENTION_DAYS, the app's own job passing every merchant each second, the
// events left read back through the event list. The rules one by one: test/fast/retention.test.ts.

const DAY = 86_400_000;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: { EVENT_RETENTION: 'on', EVENT_RETENTION_INTERVAL: '1s', EVENT_RETENTION_DAYS: '30' },
  });
}, 60_000);
afterAll(() => server?.close());

const patch = (key: string, path: string, body: unknown) =>
  api(server, key).request('PATCH', path, {
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });

async function until<T>(read: () => Promise<T | undefined>, ms: number): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The start of the merchant's first retention pass that began after `after` (ms). */
async function passAfter(merchantId: string, after: number): Promise<number> {
  return until(async () => {
    const [row] = rowsOf<{ at: string | null }>(
      await server.app.deps.db.execute(
        sql`select retention_checked_at::text as at from merchants where id = ${merchantId}::uuid`,
      ),
    );
    const at = row?.at ? Date.parse(row.at) : Number.NaN;
    return at > after ? at : undefined;
  }, 20_000);
}

async function listedIds(key: string, merchantId: string): Promise<Set<string>> {
  const res = await api(server, key).get(`/v1/partners/events?merchantId=${merchantId}&limit=100`);
  expect(res.status).toBe(200);
  return new Set((res.body.events as { id: string }[]).map((event) => event.id));
}

interface Shop {
  partner: TestPartner;
  merchantId: string;
  tagId: string;
  days: number;
  /** Event id -> event time (ms). */
  sent: Map<string, number>;
}

/** Ages (days) every merchant gets, so that the periods 2, 5, 30 and 3650 each keep a different set. */
const AGES = [1, 4, 10, 60, 400];
/** Offsets (ms) around the merchant's own boundary. */
const NEAR = [-300_000, -10_000, 60_000, 300_000];

async function sendEvents(shop: Shop): Promise<void> {
  const now = Date.now();
  const times = [...AGES.map((age) => now - age * DAY), ...NEAR.map((offset) => now - shop.days * DAY + offset)];
  const events = times.map((time, i) => ({
    id: `${shop.merchantId.slice(0, 8)}-${i}`,
    event_name: 'PageView',
    event_time: new Date(time).toISOString(),
  }));
  for (const event of events) shop.sent.set(event.id, Date.parse(event.event_time));
  await collectOk(server, shop.tagId, events);
}

describe('event retention', () => {
  it('removes the events older than each merchant’s effective period, and only those', async () => {
    const a = server.partner;
    const b = await server.createPartner('Retention B');
    expect((await patch(a.apiKey, '/v1/partners/settings', { defaultRetentionDays: 5 })).body).toEqual({
      defaultRetentionDays: 5,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
    const shop = async (partner: TestPartner, days: number, own: number | null): Promise<Shop> => {
      const tag = await preverifiedTag(server, partner);
      if (own !== null) {
        const res = await patch(partner.apiKey, `/v1/partners/merchant/${tag.merchantId}`, { retentionDays: own });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ merchantId: tag.merchantId, retentionDays: own });
      }
      return { partner, merchantId: tag.merchantId, tagId: tag.tagId, days, sent: new Map() };
    };
    const shops = [
      await shop(a, 2, 2), // its own period
      await shop(a, 5, null), // the partner's default
      await shop(b, 30, null), // the server's EVENT_RETENTION_DAYS
      await shop(b, 3650, 3650), // keeps all of these
    ];
    for (const s of shops) await sendEvents(s);
    // The statistics over the longest range a read covers (400 days to today, UTC).
    const firstDay = new Date(Date.now() - 399 * DAY).toISOString().slice(0, 10);
    const inRange = (s: Shop, ids: Iterable<string>) =>
      [...ids].filter((id) => (s.sent.get(id) ?? 0) >= Date.parse(firstDay)).length;
    const statsOf = async (s: Shop) => {
      const today = new Date().toISOString().slice(0, 10);
      const res = await api(server, s.partner.apiKey).get(
        `/v1/partners/stats/summary?merchantId=${s.merchantId}&startDate=${firstDay}&endDate=${today}`,
      );
      expect(res.status).toBe(200);
      return res.body.totals.events as number;
    };
    // Stats reads send what this process queued: every event is in the statistics before the passes.
    // The job passes a new merchant within a second, possibly before this read: a shop already
    // passed or in a pass by then (claimed or checked) is checked after the passes only.
    const untouched = async (s: Shop) =>
      rowsOf<{ untouched: boolean }>(
        await server.app.deps.db.execute(
          sql`select retention_checked_at is null and retention_claimed_until is null as untouched
            from merchants where id = ${s.merchantId}::uuid`,
        ),
      )[0]?.untouched;
    for (const s of shops) {
      const counted = await statsOf(s);
      if (await untouched(s)) expect(counted).toBe(inRange(s, s.sent.keys()));
    }
    const stored = Date.now();

    // The four passes are awaited together: one deadline for all, not one after the other.
    const passStarts = await Promise.all(shops.map((s) => passAfter(s.merchantId, stored)));
    for (const [i, s] of shops.entries()) {
      const passStart = passStarts[i]!;
      const left = await listedIds(s.partner.apiKey, s.merchantId);
      const listedAt = Date.now();
      for (const [id, time] of s.sent) {
        // Gone: older than the period at the pass. Kept: younger than it even at the listing
        // (a later pass may have started meanwhile; nothing falls between for these events).
        if (time < passStart - s.days * DAY) expect([id, left.has(id)]).toEqual([id, false]);
        else if (time >= listedAt - s.days * DAY) expect([id, left.has(id)]).toEqual([id, true]);
      }
      const keptAges = AGES.filter((age) => age < s.days);
      expect(left.size).toBe(keptAges.length + NEAR.filter((offset) => offset > 0).length);
    }
    // The statistics of the events gone went with them; those left all count.
    for (const s of shops) {
      const left = await listedIds(s.partner.apiKey, s.merchantId);
      expect([s.days, await statsOf(s)]).toEqual([s.days, inRange(s, left)]);
    }
    // The list's total agrees (the day counts follow the deletes).
    const res = await api(server, a.apiKey).get(`/v1/partners/events?merchantId=${shops[0]!.merchantId}`);
    expect(res.body.pagination.totalItems).toBe(3);
    // Setup (4 merchants, 36 events) shares PGlite's one connection with the job passing every
    // merchant each second: 12-16 s on a loaded machine, then up to passAfter's 20 s deadline.
  }, 60_000);

  it('shows retentionDays on GET and in the list; null inherits again', async () => {
    const key = server.partner.apiKey;
    const tag = await preverifiedTag(server);
    await patch(key, `/v1/partners/merchant/${tag.merchantId}`, { retentionDays: 7 });
    expect((await api(server, key).get(`/v1/partners/merchant/${tag.merchantId}`)).body.retentionDays).toBe(7);
    const listed = await api(server, key).get('/v1/partners/merchant?limit=100');
    const found = (listed.body.merchants as { merchantId: string; retentionDays: number | null }[]).find(
      (m) => m.merchantId === tag.merchantId,
    );
    expect(found?.retentionDays).toBe(7);
    const reset = await patch(key, `/v1/partners/merchant/${tag.merchantId}`, { retentionDays: null });
    expect(reset.body.retentionDays).toBeNull();
    expect((await api(server, key).get('/v1/partners/settings')).body).toEqual({
      defaultRetentionDays: 5,
      statsDigest: false,
      statsSpike: { enabled: false, multiple: 3 },
    });
  });

  it('answers bad periods with 400 { message, code }', async () => {
    const key = server.partner.apiKey;
    const tag = await preverifiedTag(server);
    const bad: unknown[] = [
      { retentionDays: 0 },
      { retentionDays: 3651 },
      { retentionDays: 2.5 },
      { retentionDays: '30' },
      {},
    ];
    for (const body of bad) {
      const res = await patch(key, `/v1/partners/merchant/${tag.merchantId}`, body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String) });
    }
    for (const body of [{ defaultRetentionDays: -1 }, { defaultRetentionDays: 'forever' }, {}]) {
      const res = await patch(key, '/v1/partners/settings', body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String) });
    }
    const malformed = await api(server, key).request('PATCH', '/v1/partners/settings', {
      body: '{"defaultRetentionDays":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect((await api(server).get('/v1/partners/settings')).status).toBe(401);
    // Nothing changed.
    expect((await api(server, key).get(`/v1/partners/merchant/${tag.merchantId}`)).body.retentionDays).toBeNull();
  });
});
