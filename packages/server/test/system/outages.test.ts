import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { type GeneratedTag, generateTag } from '../helpers/fixtures.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  startTcpProxy,
  type TcpProxy,
  viaPort,
} from '../helpers/hardening.js';

/** Measured figures, printed at the end (the closing note quotes them). */
const figures: Record<string, unknown> = {};
afterAll(() => {
  if (Object.keys(figures).length > 0) console.log(`outage figures: ${JSON.stringify(figures)}`);
});

async function timed(url: string, init?: RequestInit): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, ms: performance.now() - started };
}

describe('PostgreSQL outage (a loopback proxy in front of the real server is cut)', async () => {
  const available = await postgresAnswers();
  let scratch: ScratchDatabase;
  let proxy: TcpProxy;
  let server: TestServer;
  const auth = () => ({ authorization: `Bearer ${server.partner.apiKey}`, 'content-type': 'application/json' });

  beforeAll(async () => {
    if (!available) return;
    scratch = await createScratchDatabase('outage');
    proxy = await startTcpProxy(Number(new URL(scratch.url).port || 5432));
    server = await startTestServer({ databaseUrl: viaPort(scratch.url, proxy.port) });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
    await scratch?.drop();
  });

  it.skipIf(!available)(
    'answers 503 SERVICE_UNAVAILABLE + Retry-After within 2 s while down (500 DATABASE_ERROR only for a write cut mid-statement), /readyz 503, and the same process recovers',
    async () => {
      const list = () => timed(`${server.url}/v1/partners/merchant`, { headers: auth() });
      const create = (name: string) =>
        timed(`${server.url}/v1/partners/merchant`, {
          method: 'POST',
          headers: auth(),
          body: JSON.stringify({ name }),
        });
      expect((await list()).status).toBe(200);
      expect((await timed(`${server.url}/readyz`)).status).toBe(200);

      // Traffic in flight when the database goes away.
      const inFlight = Array.from({ length: 10 }, (_, i) =>
        i % 2
          ? list().then((r) => ({ ...r, write: false }))
          : create(`Outage ${i}`).then((r) => ({ ...r, write: true })),
      );
      await proxy.setMode('refuse');
      proxy.cutAll();
      const during = await Promise.all([
        ...inFlight,
        ...Array.from({ length: 10 }, (_, i) =>
          i % 2
            ? list().then((r) => ({ ...r, write: false }))
            : create(`Down ${i}`).then((r) => ({ ...r, write: true })),
        ),
      ]);
      for (const r of during) {
        // Requests that completed before the cut answered normally; the rest fail fast and cleanly:
        // a read is always retryable (503); a write cut mid-statement has an unknown outcome (500).
        if (r.status === 503) {
          expect(r.body).toEqual({ message: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
        } else if (r.status === 500) {
          expect(r.write).toBe(true);
          expect(r.body).toEqual({ message: expect.any(String), code: 'DATABASE_ERROR' });
        } else {
          expect([200, 201]).toContain(r.status);
        }
      }
      const down = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? list() : create(`Down2 ${i}`))));
      for (const r of down) {
        // Connections are refused: nothing reached the database, so even a write is safe to retry.
        expect(r.status).toBe(503);
        expect(r.body).toEqual({ message: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
        expect(r.ms).toBeLessThan(2000);
      }
      figures.slowestErrorMs = Math.round(Math.max(...down.map((r) => r.ms)));
      const ready = await timed(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.ms).toBeLessThan(2000);
      expect((await timed(`${server.url}/healthz`)).status).toBe(200);

      // The database comes back: the same process serves again, without a restart.
      await proxy.setMode('forward');
      const back = performance.now();
      let recovered: number | undefined;
      while (performance.now() - back < 15_000) {
        const r = await list();
        if (r.status === 200) {
          recovered = performance.now() - back;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(recovered).toBeDefined();
      figures.recoveryMs = Math.round(recovered ?? -1);
      expect((await timed(`${server.url}/readyz`)).status).toBe(200);
      const made = await create('After outage');
      expect(made.status).toBe(201);
    },
    60_000,
  );
});

/** The name the verifier looks up for a tag: `<record name>.<domain>`. */
const recordHost = (tag: GeneratedTag) => `${tag.record.name}.${tag.domain}`.toLowerCase();

/** UDP sockets this process holds: its socket fds matched against /proc/net/udp{,6} by inode. */
function openUdpSockets(): number {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {}
  }
  let count = 0;
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const inode = line.trim().split(/\s+/)[9];
      if (inode && inodes.has(inode)) count += 1;
    }
  }
  return count;
}

describe('DNS resolver dropping packets', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { DNS_TIMEOUT_MS: '800' } });
  });
  afterAll(() => server?.close());

  it.skipIf(process.platform !== 'linux')(
    'answers 503 EXTERNAL_SERVICE_ERROR within the timeout and leaves no sockets behind',
    async () => {
      const headers = { authorization: `Bearer ${server.partner.apiKey}`, 'content-type': 'application/json' };
      const tags: Array<{ tagId: string; domain: string }> = [];
      for (let i = 0; i < 20; i++) {
        const tag = await generateTag(server);
        server.dns.set(recordHost(tag), { kind: 'drop' });
        tags.push({ tagId: tag.tagId, domain: tag.domain });
      }
      const before = openUdpSockets();
      let peak = 0;
      const sampler = setInterval(() => {
        peak = Math.max(peak, openUdpSockets());
      }, 100);
      const answers = await Promise.all(
        tags.map(({ tagId, domain }) =>
          timed(`${server.url}/v1/partners/tag/verify`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ tagId, subdomain: domain }),
          }),
        ),
      );
      clearInterval(sampler);
      // The lookups did hold sockets while waiting (so the count below can see a leak)...
      expect(peak).toBeGreaterThan(before);
      for (const r of answers) {
        expect(r.status).toBe(503);
        expect(r.body).toEqual({
          message: expect.any(String),
          code: 'EXTERNAL_SERVICE_ERROR',
          details: expect.objectContaining({ reason: 'RESOLVER_UNAVAILABLE' }),
        });
        expect(r.ms).toBeLessThan(800 + 4000); // the lookup budget, with room for a loaded machine: no hang
      }
      figures.dnsDropSlowestMs = Math.round(Math.max(...answers.map((r) => r.ms)));
      // The resolvers' UDP sockets are closed with their lookups: none piles up.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const after = openUdpSockets();
      figures.udpSocketsBeforePeakAfter = [before, peak, after];
      expect(after).toBeLessThanOrEqual(before);
    },
    30_000,
  );
});
