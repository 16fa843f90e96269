// Issue 30: the create-time webhook URL check accepted loopback names written with a trailing dot
// (`localhost.` is the fully qualified `localhost`) and IPv4-compatible IPv6 literals of private
// addresses (`[::127.0.0.1]` is `::7f00:1`, "unicast" to ipaddr.js). The send-time guard refused
// them; now the create refuses them too, with the same 400 naming the rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';

let server: TestServer;

beforeAll(async () => {
  // No WEBHOOK_ALLOW_PRIVATE_URLS: the production rules.
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const create = (url: string) => api(server, server.partner.apiKey).post('/v1/partners/webhooks', { url });

describe('create-time webhook URL check: trailing dots and IPv6 forms of private addresses', () => {
  it.each([
    ['https://localhost./hook', /loopback host \(localhost\)/],
    ['https://LOCALHOST.:8443/hook', /loopback host \(localhost\)/],
    ['https://localhost../hook', /loopback host \(localhost\)/],
    ['https://foo.localhost./hook', /loopback host \(foo\.localhost\)/],
    ['https://localhost.localdomain./hook', /loopback host/],
    ['https://[::127.0.0.1]/hook', /::7f00:1 is loopback \(IPv4-compatible\)/],
    ['https://[::10.0.0.1]/hook', /::a00:1 is private \(IPv4-compatible\)/],
    ['https://[::169.254.169.254]/latest/meta-data/', /linkLocal \(IPv4-compatible\)/],
    ['https://[0:0:0:0:0:0:c0a8:101]/hook', /private \(IPv4-compatible\)/],
    ['https://[::ffff:127.0.0.1]/hook', /loopback/],
    ['https://[::ffff:169.254.169.254]/hook', /linkLocal/],
  ])('refuses %s with 400 naming the rule', async (url, rule) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: expect.stringMatching(/^url: /), code: 'VALIDATION_ERROR' });
    expect(res.body.message).toMatch(rule);
  });

  it('still accepts a public name written fully qualified, and an IPv4-compatible public address', async () => {
    for (const url of ['https://hooks.partner-example.com./hook', 'https://[::8.8.8.8]/hook']) {
      const res = await create(url);
      expect(res.status, url).toBe(201);
    }
  });
});
