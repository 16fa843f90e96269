import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { rawRequest } from '../helpers/collector.js';
import { collectOk, generateTag, publishCname, uniqueDomain } from '../helpers/fixtures.js';

// DELETE of a tag: its custom host stops serving on both processes, the monitor has nothing to
// claim, the merchant generates a tag for a new domain, `tag.deleted` is written, its events stay.

let a: TestServer;
let b: RunningApp;

beforeAll(async () => {
  a = await startTestServer();
  b = await startApp({ ...a.app.deps.env, PORT: 0 }, { database: a.app.database });
}, 60_000);
afterAll(async () => {
  await b?.close(2000);
  await a?.close();
});

async function until(condition: () => Promise<boolean>, ms: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await condition()) return performance.now() - started;
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('DELETE /v1/partners/tag/{tagId}', () => {
  it('stops the host on both processes, keeps the events, and lets the merchant move domain', async () => {
    const key = a.partner.apiKey;
    const tag = await generateTag(a);
    publishCname(a, tag);
    const verified = await api(a, key).post('/v1/partners/tag/verify', { tagId: tag.tagId, subdomain: tag.domain });
    expect(verified.status).toBe(200);
    await collectOk(a, tag.tagId, [{ id: 'kept-1', event_name: 'PageView' }]);
    const host = `${tag.record.name}.${tag.domain}`;
    for (const url of [a.url, b.url]) {
      expect((await rawRequest(url, { path: `/t/${tag.tagId}.js`, host })).status).toBe(200);
    }

    const res = await api(a, key).request('DELETE', `/v1/partners/tag/${tag.tagId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tagId: tag.tagId, deleted: true });
    for (const url of [a.url, b.url]) {
      const ms = await until(
        async () => (await rawRequest(url, { path: `/t/${tag.tagId}.js`, host })).status === 404,
        1_000,
      );
      expect(ms).toBeLessThan(1_000);
    }
    expect(a.app.deps.collectorHosts.has(host)).toBe(false);
    expect((await api(a, key).get(`/v1/partners/tag/${tag.tagId}`)).status).toBe(404);
    const again = await api(a, key).request('DELETE', `/v1/partners/tag/${tag.tagId}`);
    expect([again.status, again.body.code]).toEqual([404, 'TAG_NOT_FOUND']);
    const direct = await api(a).post('/v1/collect', { tagId: tag.tagId, events: [{ event_name: 'PageView' }] });
    expect([direct.status, direct.body.code]).toEqual([404, 'TAG_NOT_FOUND']);
    // Nothing left for the monitor to claim.
    expect(rowsOf(await a.app.deps.db.execute(sql`select 1 from tags where id = ${tag.tagId}::uuid`))).toEqual([]);

    // The events stay with the merchant.
    const events = await api(a, key).get(`/v1/partners/events?merchantId=${tag.merchantId}`);
    expect(events.status).toBe(200);
    expect(events.body.events.map((e: { id: string }) => e.id)).toEqual(['kept-1']);

    // tag.deleted carries the tag as it was.
    const [message] = rowsOf<{ data: Record<string, unknown> }>(
      await a.app.deps.db.execute(
        sql`select data from webhook_messages where type = 'tag.deleted' and data->>'tagId' = ${tag.tagId}`,
      ),
    );
    expect(message?.data).toMatchObject({ tagId: tag.tagId, merchantId: tag.merchantId, domain: tag.domain });

    // The merchant moves domain: a new custom tag, served on both processes.
    const moved = await generateTag(a, { merchantId: tag.merchantId, domain: uniqueDomain('moved') });
    expect(moved.message).toBe('New tag created successfully');
    expect(moved.tagId).not.toBe(tag.tagId);
    const newHost = `${moved.record.name}.${moved.domain}`;
    for (const url of [a.url, b.url]) {
      await until(
        async () => (await rawRequest(url, { path: `/t/${moved.tagId}.js`, host: newHost })).status === 200,
        2_000,
      );
    }
  }, 30_000);
});
