// The tag monitor across server processes (`node --import tsx src/main.ts`) on one scratch
// PostgreSQL database and the loopback DNS server:
// 1. two processes, 40 checks due at once: each check runs once (one DNS query per record, one
//    tag.verified per tag), whichever process claims it;
// 2. due times survive restarts: both processes stopped, checks made due, one new process runs them.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/read-rows.js';
import { onboardPartner } from '../../src/features/partners/onboard-partner.js';
import {
  startTestDnsServer,
  TEST_TARGET_HOST,
  type TestDnsServer,
  uniquePartnerDomain,
} from '../../src/testing/index.js';
import {
  createScratchDatabase,
  postgresAnswers,
  type ScratchDatabase,
  type ServerProcess,
  spawnServer,
} from '../helpers/hardening.js';

const pgUp = await postgresAnswers();
if (!pgUp) console.warn('tag monitor process tests skipped: PostgreSQL does not answer at 127.0.0.1:5432');

const TAGS = 40;

describe.skipIf(!pgUp)('tag monitor across processes', () => {
  let scratch: ScratchDatabase;
  let database: DatabaseHandle;
  let dns: TestDnsServer;
  let apiKey: string;
  const processes: ServerProcess[] = [];
  const tags: Array<{ tagId: string; host: string; target: string }> = [];

  const start = async () => {
    const p = await spawnServer({
      DATABASE_URL: scratch.url,
      TAG_TARGET_HOST: TEST_TARGET_HOST,
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: '1000',
      // Nothing is due on its own during the test: the test makes checks due in the database.
      TAG_RECHECK_SCHEDULE: '1h',
      TAG_HEALTH_INTERVAL: '1h',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    processes.push(p);
    return p;
  };

  const api = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };

  const makeAllDue = () => database.db.execute(sql`update tags set next_check_at = now() where domain_type = 'custom'`);

  const countMessages = async (type: string) =>
    rowsOf(
      await database.db.execute(
        sql`select data->>'tagId' as "tagId", count(*)::int as n from webhook_messages where type = ${type} group by 1`,
      ),
    ) as Array<{ tagId: string; n: number }>;

  const waitFor = async (what: string, done: () => Promise<boolean>, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  beforeAll(async () => {
    scratch = await createScratchDatabase('monitor');
    database = await openDatabase({ kind: 'postgres', url: scratch.url, maxConnections: 2 });
    apiKey = (await onboardPartner(database.db, { name: 'Monitor', domain: uniquePartnerDomain() }, TEST_TARGET_HOST))
      .apiKey;
    dns = await startTestDnsServer();
  }, 120_000);

  afterAll(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await database?.close();
    await dns?.close();
    await scratch?.drop();
  });

  it('two processes run each due check once', async () => {
    const [a, b] = [await start(), await start()];
    for (let i = 0; i < TAGS; i++) {
      const server = i % 2 === 0 ? a : b;
      const { merchantId } = await api(server, 'POST', '/v1/partners/merchant', { name: `Shop ${i}` });
      const domain = `mon-${i}-${Date.now().toString(36)}.com`;
      const tag = (await api(server, 'POST', '/v1/partners/tag/generate', { merchantId, domain })) as {
        tagId: string;
        record: { name: string; value: string };
      };
      tags.push({ tagId: tag.tagId, host: `${tag.record.name}.${domain}`, target: tag.record.value });
      dns.setCname(`${tag.record.name}.${domain}`, tag.record.value);
    }
    dns.queries.length = 0;
    await makeAllDue();
    await waitFor('every tag verified', async () => {
      const [row] = rowsOf(await database.db.execute(sql`select count(*)::int as n from tags where is_verified`));
      return row?.n === TAGS;
    });
    // One check per due tag: its record name was asked exactly once, across both processes.
    for (const tag of tags)
      expect(
        dns.queries.filter((q) => q === tag.host),
        tag.host,
      ).toHaveLength(1);
    const verified = await countMessages('tag.verified');
    expect(verified).toHaveLength(TAGS);
    expect(verified.every((m) => m.n === 1)).toBe(true);
    const first = tags[0]!;
    expect(await api(b, 'GET', `/v1/partners/tag/${first.tagId}`)).toMatchObject({
      isVerified: true,
      isConnected: true,
      lastCheck: { ok: true },
    });
  }, 180_000);

  it('due checks survive a restart: a new process runs the checks the stopped ones left', async () => {
    for (const p of processes.splice(0)) {
      p.kill('SIGTERM');
      await p.exited;
    }
    // While no process runs: half the records disappear and every check falls due.
    const gone = tags.filter((_, i) => i % 2 === 0);
    for (const tag of gone) dns.clear(tag.host);
    await makeAllDue();
    dns.queries.length = 0;
    const c = await start();
    await waitFor(
      'the removed records seen',
      async () => (await countMessages('tag.disconnected')).length === gone.length,
    );
    await waitFor('every check run', async () => {
      const [row] = rowsOf(
        await database.db.execute(sql`select count(*)::int as n from tags where next_check_at <= now()`),
      );
      return row?.n === 0;
    });
    expect((await countMessages('tag.disconnected')).every((m) => m.n === 1)).toBe(true);
    for (const tag of tags) {
      // A check that finds no CNAME also asks for A and AAAA records at the name.
      expect(
        dns.queries.filter((q) => q === tag.host),
        tag.host,
      ).toHaveLength(gone.includes(tag) ? 3 : 1);
    }
    expect(await api(c, 'GET', `/v1/partners/tag/${gone[0]!.tagId}`)).toMatchObject({
      isVerified: true,
      isConnected: false,
      status: 'waiting_for_events',
    });
  }, 180_000);
});
