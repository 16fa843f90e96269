import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { preverifiedTag, rawRequest } from '../helpers/collector.js';

/**
 * Issue 30 finding 7: `TRUST_PROXY=true` believes the left-most X-Forwarded-For hop, which the
 * client writes. A hop count picks the Nth hop from the right and a proxy list skips trusted
 * proxies from the right; `true` is kept but deprecated with a startup warning. What reaches the
 * budgets is the chosen hop's budget key (IPv6 by /64, IPv4-mapped as IPv4). Real sockets; the
 * test client (127.0.0.1) is the proxy nearest to the server.
 */
const BUDGET = 1;

function collect(server: TestServer, tagId: string, xff: string) {
  return rawRequest(server.url, {
    method: 'POST',
    path: '/v1/collect',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': xff },
    body: JSON.stringify({ tagId, events: [{ event_name: 'PageView' }] }),
  });
}

async function statuses(server: TestServer, tagId: string, hops: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const xff of hops) out.push((await collect(server, tagId, xff)).status);
  return out;
}

describe.each([
  // Two proxies: the socket's peer (127.0.0.1) and the edge that appended 10.0.0.x.
  { mode: 'a hop count (2)', value: '2' },
  { mode: 'a list of proxy CIDRs', value: '127.0.0.0/8,10.0.0.0/8' },
])('TRUST_PROXY as $mode behind two proxies', ({ value }) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { TRUST_PROXY: value, COLLECT_RATE_LIMIT_PER_MINUTE: String(BUDGET) } });
  });
  afterAll(() => server?.close());

  it('the client is the hop the edge proxy saw; hops the client wrote left of it change nothing', async () => {
    const tag = await preverifiedTag(server);
    expect(
      await statuses(server, tag.tagId, [
        '203.0.113.10, 10.0.0.2',
        // Forged left-most entries, another edge instance: the same client, its budget spent.
        '198.51.100.1, 203.0.113.10, 10.0.0.3',
        '198.51.100.2, 198.51.100.3, 203.0.113.10, 10.0.0.2',
      ]),
    ).toEqual([202, 429, 429]);
    expect(await statuses(server, tag.tagId, ['203.0.113.10, 203.0.113.11, 10.0.0.2'])).toEqual([202]);
  });

  it('the chosen hop keys by /64 (IPv6) and as IPv4 when IPv4-mapped', async () => {
    const tag = await preverifiedTag(server);
    expect(await statuses(server, tag.tagId, ['2001:db8:aa:1::1, 10.0.0.2', '2001:db8:aa:1::2, 10.0.0.2'])).toEqual([
      202, 429,
    ]);
    expect(await statuses(server, tag.tagId, ['::ffff:203.0.113.90, 10.0.0.2', '203.0.113.90, 10.0.0.2'])).toEqual([
      202, 429,
    ]);
  });
});

describe('TRUST_PROXY=true (deprecated)', () => {
  let server: TestServer;
  const lines: string[] = [];
  beforeAll(async () => {
    server = await startTestServer({
      env: { TRUST_PROXY: 'true', COLLECT_RATE_LIMIT_PER_MINUTE: String(BUDGET), LOG_LEVEL: 'warn' },
      logDestination: { write: (line) => lines.push(line) },
    });
  });
  afterAll(() => server?.close());

  it('warns at start, and (as documented) takes the left-most hop', async () => {
    expect(lines.some((line) => /TRUST_PROXY=true is deprecated/.test(line))).toBe(true);
    const tag = await preverifiedTag(server);
    expect(await statuses(server, tag.tagId, ['198.51.100.50, 10.0.0.2', '198.51.100.51, 10.0.0.2'])).toEqual([
      202, 202,
    ]);
  });
});
