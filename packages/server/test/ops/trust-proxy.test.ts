import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvError, parseEnv } from '../../src/kernel/env.js';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collectorHostOf, postEvents, preverifiedTag, rawRequest } from '../helpers/collector.js';

/**
 * TRUST_PROXY (issue 17 item 4), through real sockets: the per-address collector budget and the
 * `muid` cookie's Secure flag. The test client connects from 127.0.0.1, so "the proxy" is loopback.
 */

const BUDGET = 2;

function collect(server: TestServer, tagId: string, headers: Record<string, string> = {}) {
  return rawRequest(server.url, {
    method: 'POST',
    path: '/v1/collect',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ tagId, events: [{ event_name: 'PageView' }] }),
  });
}

async function statuses(server: TestServer, tagId: string, headers: Record<string, string>, n: number) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await collect(server, tagId, headers)).status);
  return out;
}

describe('TRUST_PROXY parsing (env.ts)', () => {
  it('off by default; true, a hop count, or a list of addresses/CIDRs; anything else names the variable', () => {
    expect(parseEnv({}).TRUST_PROXY).toEqual({ kind: 'off' });
    expect(parseEnv({ TRUST_PROXY: 'false' }).TRUST_PROXY).toEqual({ kind: 'off' });
    expect(parseEnv({ TRUST_PROXY: 'true' }).TRUST_PROXY).toEqual({ kind: 'all' });
    expect(parseEnv({ TRUST_PROXY: '2' }).TRUST_PROXY).toEqual({ kind: 'hops', hops: 2 });
    expect(parseEnv({ TRUST_PROXY: '10.0.0.0/8, loopback,fd00::1' }).TRUST_PROXY).toEqual({
      kind: 'list',
      list: ['10.0.0.0/8', 'loopback', 'fd00::1'],
    });
    expect(() => parseEnv({ TRUST_PROXY: 'proxy.example.com' })).toThrow(EnvError);
    expect(() => parseEnv({ TRUST_PROXY: '10.0.0.0/99' })).toThrow(/TRUST_PROXY: must be true, false, a hop count/);
  });
});

describe.each([
  { mode: 'a hop count', value: '1' },
  { mode: 'a list of proxy addresses', value: '127.0.0.1/8,::1' },
])('TRUST_PROXY on ($mode) behind a TLS-terminating balancer', ({ value }) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { TRUST_PROXY: value, COLLECT_RATE_LIMIT_PER_MINUTE: String(BUDGET) } });
  });
  afterAll(() => server?.close());

  it('two forwarded client addresses get separate per-address budgets; the right-most untrusted hop counts', async () => {
    const tag = await preverifiedTag(server);
    const a = { 'x-forwarded-for': '203.0.113.10' };
    // A client-supplied entry left of the balancer's own is not believed: still 203.0.113.10's budget.
    const aForged = { 'x-forwarded-for': '198.51.100.99, 203.0.113.10' };
    const b = { 'x-forwarded-for': '203.0.113.20' };
    expect(await statuses(server, tag.tagId, a, 1)).toEqual([202]);
    expect(await statuses(server, tag.tagId, aForged, 2)).toEqual([202, 429]);
    expect(await statuses(server, tag.tagId, b, BUDGET + 1)).toEqual([202, 202, 429]);
  });

  it('X-Forwarded-Proto: https from the trusted balancer makes the muid cookie Secure; http does not', async () => {
    const tag = await preverifiedTag(server);
    const host = await collectorHostOf(server, tag);
    const send = (proto: string, ip: string) =>
      postEvents(
        server.url,
        host,
        { tagId: tag.tagId, events: [{ event_name: 'PageView' }] },
        { 'x-forwarded-proto': proto, 'x-forwarded-for': ip },
      );
    const https = await send('https', '203.0.113.30');
    expect(https.status).toBe(202);
    expect(https.headers['set-cookie']?.[0]).toMatch(/;\s*Secure/);
    const http = await send('http', '203.0.113.31');
    expect(http.status).toBe(202);
    expect(http.headers['set-cookie']?.[0]).not.toMatch(/Secure/);
  });
});

describe('TRUST_PROXY off (the default): forwarding headers are never read', () => {
  let server: TestServer;
  let unlimited: TestServer;
  beforeAll(async () => {
    [server, unlimited] = await Promise.all([
      startTestServer({ env: { COLLECT_RATE_LIMIT_PER_MINUTE: String(BUDGET) } }),
      startTestServer(),
    ]);
  });
  afterAll(() => Promise.all([server?.close(), unlimited?.close()]));

  it('a forged X-Forwarded-For is ignored: the per-address limit hits the real (socket) address', async () => {
    const tag = await preverifiedTag(server);
    const got = [
      (await collect(server, tag.tagId, { 'x-forwarded-for': '203.0.113.10' })).status,
      (await collect(server, tag.tagId, { 'x-forwarded-for': '203.0.113.20' })).status,
      (await collect(server, tag.tagId, { 'x-forwarded-for': '203.0.113.30' })).status,
    ];
    expect(got).toEqual([202, 202, 429]);
  });

  it('a forged X-Forwarded-Proto: https does not make the cookie Secure', async () => {
    const tag = await preverifiedTag(unlimited);
    const host = await collectorHostOf(unlimited, tag);
    const res = await postEvents(
      unlimited.url,
      host,
      { tagId: tag.tagId, events: [{ event_name: 'PageView' }] },
      { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.40' },
    );
    expect(res.status).toBe(202);
    expect(res.headers['set-cookie']?.[0]).toContain('muid=');
    expect(res.headers['set-cookie']?.[0]).not.toMatch(/Secure/);
  });
});
