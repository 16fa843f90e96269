import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collect, preverifiedTag } from '../helpers/fixtures.js';
import { until } from '../helpers/until.js';
import { query } from './stats-helpers.js';

// The fold backs off to 8 s while nothing is pending; stored events wake it within its 1 s
// interval (NOTIFY partner_events), so the aggregates catch up without a stats read.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const pending = async (merchantId: string) =>
  Number(
    (
      await query<{ n: number }>(
        server,
        sql`select count(*)::int as n from stat_pending where merchant_id = ${merchantId}::uuid`,
      )
    )[0]?.n,
  );

describe('the statistics fold after a quiet spell', () => {
  it('folds new events within seconds, not after its idle backoff', async () => {
    const tag = await preverifiedTag(server);
    // Idle long enough for the pause to reach its 8 s cap (1 + 2 + 4 + 8 s).
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    const sent = Date.now();
    expect((await collect(server, tag.tagId, [{ event_name: 'PageView', data: { path: '/' } }])).status).toBe(202);
    await until('the fold', async () => ((await pending(tag.merchantId)) === 0 ? true : undefined), 10_000);
    const waited = Date.now() - sent;
    // Within the spec's 5 s (the 1 s wake and the fold itself); the backoff alone
    // could have left it pending for up to 8 s.
    expect(waited).toBeLessThan(5_000);
    const [row] = await query<{ n: number }>(
      server,
      sql`select sum(events)::int as n from stat_buckets where merchant_id = ${tag.merchantId}::uuid and grain = 15 and event_name = ''`,
    );
    expect(Number(row?.n)).toBe(1);
  }, 60_000);
});
