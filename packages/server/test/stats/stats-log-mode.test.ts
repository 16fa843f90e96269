// Log mode (EVENT_LOG_URL): the 202 means the log has the events; the writer stores them, and the
// aggregates with them, within 5 s. Needs the machine's NATS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { deleteLogStream, NATS_URL, natsAnswers, uniqueLogPrefix, waitFor } from '../helpers/event-log.js';
import { collectOk, preverifiedTag } from '../helpers/fixtures.js';
import { getStats } from './stats-helpers.js';

const available = await natsAnswers();
if (!available) console.warn(`stats log-mode test skipped: NATS does not answer at ${NATS_URL}`);
const prefix = uniqueLogPrefix();
let server: TestServer;

beforeAll(async () => {
  if (!available) return;
  server = await startTestServer({ env: { EVENT_LOG_URL: NATS_URL, EVENT_LOG_PREFIX: prefix } });
}, 60_000);
afterAll(async () => {
  if (available) await deleteLogStream(prefix);
});
afterAll(async () => {
  await server?.close();
});

describe.skipIf(!available)('stats in log mode', () => {
  it('counts collected events within 5 s of the 202', async () => {
    const tag = await preverifiedTag(server);
    const now = new Date();
    const date = now.toISOString().slice(0, 10);
    const events = Array.from({ length: 40 }, (_, i) => ({
      event_name: i % 4 === 0 ? 'Purchase' : 'PageView',
      muid: `log-${i % 10}`,
      event_time: now.toISOString(),
      data: i % 4 === 0 ? { value: '2.50', currency: 'USD' } : { path: '/log', referrer: 'https://news.example/x' },
    }));
    await collectOk(server, tag.tagId, events);
    const accepted = Date.now();
    const q = { merchantId: tag.merchantId, startDate: date, endDate: date };
    let totals: { events: number } | undefined;
    await waitFor(
      async () => {
        totals = (await getStats(server, 'summary', q)).body.totals;
        return totals?.events === 40;
      },
      5_000,
      'the aggregates of 40 events',
    );
    expect(Date.now() - accepted).toBeLessThan(5_000);
    expect(totals).toEqual({
      events: 40,
      visitors: 10,
      pageviews: 30,
      purchases: 10,
      revenue: [{ currency: 'USD', amount: '25.00' }],
      // Each visitor's events share one instant: one visit each, of 2 or 4 page views.
      visits: 10,
      bounceRate: 0,
      visitDuration: 0,
      viewsPerVisit: 3,
      botEvents: 0,
      goals: [],
    });
    const referrers = await getStats(server, 'breakdown', { ...q, dimension: 'referrer' });
    expect(referrers.body.rows).toEqual([{ value: 'news.example', events: 30, visitors: 10, visits: 10 }]);
  });
});
