import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { postEvents, rawRequest } from '../helpers/collector.js';
import { collectOk, type GeneratedTag, generateTag, preverifiedTag, uniqueDomain } from '../helpers/fixtures.js';

// DELETE of a merchant through the real transport: gone for every reader at once, its collector
// refusing at once on two processes sharing the database, its rows and statistics purged in the
// background while another merchant's stay, then `merchant.deleted`.

let a: TestServer;
let b: RunningApp;

beforeAll(async () => {
  // The purge waits DB_STATEMENT_TIMEOUT + 0.5 s after a DELETE (events accepted before it commit meanwhile).
  a = await startTestServer({ env: { DB_STATEMENT_TIMEOUT: '2000' } });
  b = await startApp({ ...a.app.deps.env, PORT: 0 }, { database: a.app.database });
}, 60_000);
afterAll(async () => {
  await b?.close(2000);
  await a?.close();
});

const count = async (table: string, merchantId: string) => {
  const [row] = rowsOf<{ n: number }>(
    await a.app.deps.db.execute(
      sql`select count(*)::int as n from ${sql.identifier(table)} where merchant_id = ${merchantId}::uuid`,
    ),
  );
  return row?.n ?? 0;
};
const TABLES = ['events', 'event_day_counts'];
const HOUR = 3_600_000;
/**
 * The merchant's statistics of the last day, read from the store itself: the API answers 404 for a
 * deleted merchant, and the purge is what must remove them.
 */
const statsOf = async (merchantId: string) => {
  const end = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
  const points = await a.app.deps.stats!.points('test', {
    merchantId,
    start: end - 26 * HOUR,
    end,
    names: [],
    filters: [],
    cut: { splitAt: end - 26 * HOUR },
  });
  return points.get('1') ?? { events: 0, visitors: 0, pageviews: 0, purchases: 0, revenue: [] };
};
const countsOf = async (merchantId: string): Promise<Record<string, number>> => ({
  ...Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await count(t, merchantId)] as const))),
  stats: (await statsOf(merchantId)).events,
});

async function until(condition: () => Promise<boolean>, ms: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await condition()) return performance.now() - started;
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const events = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${i}`,
    event_name: i % 3 === 0 ? 'Purchase' : 'PageView',
    data: i % 3 === 0 ? { value: 10, currency: 'EUR' } : { url: `https://shop.example/p${i}` },
  }));

async function shopWithEvents(n: number): Promise<{ tag: GeneratedTag; host: string }> {
  const tag = await preverifiedTag(a);
  await collectOk(a, tag.tagId, events(n, tag.tagId));
  return { tag, host: `${a.partner.record.name}.${a.partner.domain}` };
}

describe('DELETE /v1/partners/merchant/{merchantId}', () => {
  it('is 404 on every read path at once, refused by the collector on both processes, purged later', async () => {
    const key = a.partner.apiKey;
    const { tag, host } = await shopWithEvents(30);
    const other = await shopWithEvents(20);
    const id = tag.merchantId;
    // Process B has the tag in its caches (script and events accepted there).
    expect((await rawRequest(b.url, { path: `/t/${tag.tagId}.js`, host })).status).toBe(200);
    expect((await postEvents(b.url, host, { tagId: tag.tagId, events: [{ event_name: 'PageView' }] })).status).toBe(
      202,
    );
    await until(async () => (await count('events', id)) === 31, 5_000);
    // Both merchants' events are in the statistics before the DELETE (B's sent by B).
    await until(async () => (await statsOf(id)).events === 31, 10_000);
    const before = await countsOf(id);
    const otherBefore = await countsOf(other.tag.merchantId);
    expect(before).toMatchObject({ events: 31, stats: 31 });
    expect(before.event_day_counts).toBeGreaterThan(0);
    expect(await statsOf(id)).toMatchObject({
      pageviews: 21,
      purchases: 10,
      revenue: [{ currency: 'EUR', amount: '100' }],
    });
    expect(otherBefore).toMatchObject({ events: 20, stats: 20 });
    const day = new Date().toISOString().slice(0, 10);
    const otherSummary = () =>
      api(a, key).get(`/v1/partners/stats/summary?merchantId=${other.tag.merchantId}&startDate=${day}&endDate=${day}`);
    const otherStatsBefore = (await otherSummary()).body;
    const usage = async () =>
      rowsOf<{ merchants: number }>(
        await a.app.deps.db.execute(
          sql`select merchants from partner_usage where partner_id = ${a.partner.partnerId}::uuid`,
        ),
      )[0]?.merchants;
    const usageBefore = await usage();

    const res = await api(a, key).request('DELETE', `/v1/partners/merchant/${id}`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ merchantId: id, deleted: true, purge: 'pending' });
    expect(await usage()).toBe((usageBefore ?? 0) - 1);

    // Every read path, at once.
    const reads = [
      `/v1/partners/merchant/${id}`,
      `/v1/partners/events?merchantId=${id}`,
      `/v1/partners/events/export?merchantId=${id}`,
      `/v1/partners/events/stream?merchantId=${id}`,
      `/v1/partners/tag/${tag.tagId}`,
      `/v1/partners/tag/${tag.tagId}/snippet`,
      `/v1/partners/stats/summary?merchantId=${id}&startDate=${day}&endDate=${day}`,
      `/v1/partners/stats/timeseries?merchantId=${id}&startDate=${day}&endDate=${day}`,
      `/v1/partners/stats/breakdown?merchantId=${id}&startDate=${day}&endDate=${day}&dimension=path`,
    ];
    for (const path of reads) {
      const read = await api(a, key).get(path);
      expect([path, read.status]).toEqual([path, 404]);
      expect(['MERCHANT_NOT_FOUND', 'TAG_NOT_FOUND']).toContain(read.body.code);
    }
    const list = await api(a, key).get('/v1/partners/merchant?limit=100');
    expect(list.body.merchants.map((m: { merchantId: string }) => m.merchantId)).not.toContain(id);
    expect(list.body.pagination.totalItems).toBe(list.body.merchants.length);
    for (const [method, path, body] of [
      ['PATCH', `/v1/partners/merchant/${id}`, { name: 'x' }],
      ['DELETE', `/v1/partners/merchant/${id}`, undefined],
      ['POST', '/v1/partners/tag/generate', { merchantId: id, domain: uniqueDomain() }],
    ] as const) {
      const write = await api(a, key).request(method, path, {
        headers: { 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect([method, path, write.status, write.body.code]).toEqual([method, path, 404, 'MERCHANT_NOT_FOUND']);
    }

    // The collector refuses on both processes within a NOTIFY (the caches would keep it 5 s and 30 s).
    for (const url of [a.url, b.url]) {
      const ms = await until(async () => {
        const sent = await postEvents(url, host, { tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
        const script = await rawRequest(url, { path: `/t/${tag.tagId}.js`, host });
        return sent.status === 404 && sent.json?.code === 'TAG_NOT_FOUND' && script.status === 404;
      }, 1_000);
      expect(ms).toBeLessThan(1_000);
    }
    const direct = await api(a).post('/v1/collect', { tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
    expect([direct.status, direct.body.code]).toEqual([404, 'TAG_NOT_FOUND']);

    // The purge: every row of the merchant goes, then merchant.deleted; the other merchant's stay.
    await until(async () => {
      const [row] = rowsOf(
        await a.app.deps.db.execute(
          sql`select 1 from webhook_messages where type = 'merchant.deleted' and data->>'merchantId' = ${id}`,
        ),
      );
      return row !== undefined;
    }, 20_000);
    // Its rows in PostgreSQL and its statistics.
    expect(await countsOf(id)).toEqual({ ...Object.fromEntries(TABLES.map((t) => [t, 0])), stats: 0 });
    const [merchantRow] = rowsOf(await a.app.deps.db.execute(sql`select 1 from merchants where id = ${id}::uuid`));
    expect(merchantRow).toBeUndefined();
    expect(await countsOf(other.tag.merchantId)).toEqual(otherBefore);
    expect((await otherSummary()).body).toEqual(otherStatsBefore);
    const [message] = rowsOf<{ data: Record<string, string> }>(
      await a.app.deps.db.execute(
        sql`select data from webhook_messages where type = 'merchant.deleted' and data->>'merchantId' = ${id}`,
      ),
    );
    expect(message?.data).toMatchObject({ merchantId: id });
    expect(Date.parse(message?.data.purgedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(message?.data.deletedAt ?? ''));
  }, 60_000);

  it('GET and PATCH answer the merchant with its tags; another partner gets 404', async () => {
    const key = a.partner.apiKey;
    const tag = await generateTag(a);
    const got = await api(a, key).get(`/v1/partners/merchant/${tag.merchantId}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ merchantId: tag.merchantId, name: 'Merchant', tags: [{ tagId: tag.tagId }] });
    const renamed = await api(a, key).request('PATCH', `/v1/partners/merchant/${tag.merchantId}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '  Renamed Shop ' }),
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...got.body, name: 'Renamed Shop' });
    const empty = await api(a, key).request('PATCH', `/v1/partners/merchant/${tag.merchantId}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: ' ' }),
    });
    expect([empty.status, empty.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    const stranger = await a.createPartner('Stranger');
    for (const method of ['GET', 'DELETE']) {
      const res = await api(a, stranger.apiKey).request(method, `/v1/partners/merchant/${tag.merchantId}`);
      expect([method, res.status, res.body.code]).toEqual([method, 404, 'MERCHANT_NOT_FOUND']);
    }
    expect((await api(a, key).get(`/v1/partners/merchant/${tag.merchantId}`)).status).toBe(200);
  });
});
