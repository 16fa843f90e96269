import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { collect, preverifiedTag } from '../helpers/fixtures.js';
import { getStats, query } from './stats-helpers.js';

// STATS_FOLD=off: this process leaves the fold to others (the bench's write-path row, a fleet that
// folds on a few processes), and a stats read still folds its merchant first.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { STATS_FOLD: 'off' } });
});
afterAll(() => server?.close());

describe('a process with STATS_FOLD=off', () => {
  it('leaves stored events pending, and a stats read counts them', async () => {
    expect(server.app.parts.map((part) => part.name)).not.toContain('stats-fold');
    const tag = await preverifiedTag(server);
    const events = [1, 2, 3].map((n) => ({ event_name: 'PageView', muid: `v${n}`, data: { path: `/p${n}` } }));
    expect((await collect(server, tag.tagId, events)).status).toBe(202);
    // Past the 1 s interval a folding process wakes within: nothing here took the range.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const [pending] = await query<{ n: number }>(
      server,
      sql`select count(*)::int as n from stat_pending where merchant_id = ${tag.merchantId}::uuid`,
    );
    expect(Number(pending?.n)).toBe(1);
    const today = new Date().toISOString().slice(0, 10);
    const res = await getStats(server, 'summary', { merchantId: tag.merchantId, startDate: today, endDate: today });
    expect(res.status).toBe(200);
    expect((res.body as { totals: { events: number; visitors: number } }).totals).toMatchObject({
      events: 3,
      visitors: 3,
    });
  }, 60_000);
});
