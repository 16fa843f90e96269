import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { allEvents, postEvents, rawRequest, verifiedTag } from '../helpers/collector.js';

/**
 * Finding 11 of the security round (the server's part; the browser part, URLs without query string
 * or fragment, is in test/system/live-tag.browser.test.ts): a `muid` in the body overrode the
 * visitor's first-party cookie, so a page script could file events under any visitor. The cookie
 * wins; a body `muid` counts only when there is no cookie.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('finding 11: the cookie names the visitor, the script strips URLs', () => {
  it('a body muid is ignored when the muid cookie is there, used when it is not', async () => {
    const tag = await verifiedTag(server);
    const host = `${tag.record.name}.${tag.domain}`;
    const cookieMuid = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
    const withCookie = await postEvents(
      server.url,
      host,
      { tagId: tag.tagId, events: [{ id: 'c1', event_name: 'PageView', muid: 'someone-else-entirely' }] },
      { cookie: `muid=${cookieMuid}` },
    );
    expect(withCookie.status).toBe(202);
    const withoutCookie = await postEvents(server.url, host, {
      tagId: tag.tagId,
      events: [{ id: 'n1', event_name: 'PageView', muid: 'server-side-visitor-1' }],
    });
    expect(withoutCookie.status).toBe(202);
    const events = await allEvents(server, tag.merchantId, { sortBy: 'event_name', sortOrder: 'asc' });
    const byId = Object.fromEntries(events.map((e: { id: string; muid: string }) => [e.id, e.muid]));
    expect(byId).toEqual({ c1: cookieMuid, n1: 'server-side-visitor-1' });
  });

  it('the served tag script records origin and path only', async () => {
    const tag = await verifiedTag(server);
    const script = await rawRequest(server.url, {
      path: `/t/${tag.tagId}.js`,
      host: `${tag.record.name}.${tag.domain}`,
    });
    expect(script.status).toBe(200);
    expect(script.text).not.toContain('url: location.href');
    expect(script.text).toContain('x.origin + x.pathname');
  });
});
