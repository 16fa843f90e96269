import { describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError, type StatsSummary, type StatsTimeseries } from '../src/index.js';
import { makeClient, reply, sequence, server, useMsw } from './helpers.js';

useMsw();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const RANGE = { startDate: '2026-11-01', endDate: '2026-11-07', timezone: 'America/New_York' };
const TOTALS = { events: 3, visitors: 2, pageviews: 2, purchases: 1, revenue: [{ currency: 'EUR', amount: '10.50' }] };

describe('client.stats', () => {
  it('summary sends GET /v1/partners/stats/summary with the range, zone, filter and compare', async () => {
    const body: StatsSummary = { range: RANGE, totals: TOTALS, previous: { range: RANGE, totals: TOTALS } };
    const { handler, seen } = sequence('get', '/v1/partners/stats/summary', [() => reply(body)]);
    server.use(handler);
    const summary = await makeClient().stats.summary({
      merchantId: MERCHANT_ID,
      ...RANGE,
      events: ['PageView', ' Purchase '],
      compare: 'previous',
    });
    expect(summary).toEqual(body);
    expect(seen[0]?.method).toBe('GET');
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({
      merchantId: MERCHANT_ID,
      ...RANGE,
      events: 'PageView,Purchase',
      compare: 'previous',
    });
    expect(seen[0]?.headers.get('idempotency-key')).toBeNull();
  });

  it('timeseries sends the interval and leaves out what is not given', async () => {
    const body: StatsTimeseries = {
      range: RANGE,
      interval: 'week',
      points: [{ start: '2026-11-01T00:00:00-04:00', ...TOTALS }],
    };
    const { handler, seen } = sequence('get', '/v1/partners/stats/timeseries', [() => reply(body)]);
    server.use(handler);
    const series = await makeClient().stats.timeseries({
      merchantId: MERCHANT_ID,
      startDate: '2026-11-01',
      endDate: '2026-11-07',
      interval: 'week',
    });
    expect(series.points[0]?.start).toBe('2026-11-01T00:00:00-04:00');
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({
      merchantId: MERCHANT_ID,
      startDate: '2026-11-01',
      endDate: '2026-11-07',
      interval: 'week',
    });
  });

  it('breakdown sends dimension and limit; a string events filter is sent as a comma list', async () => {
    const body = {
      range: RANGE,
      dimension: 'path',
      rows: [{ value: '/', events: 2, visitors: 2 }],
      other: { value: 'other', events: 1, visitors: 1 },
    };
    const { handler, seen } = sequence('get', '/v1/partners/stats/breakdown', [() => reply(body)]);
    server.use(handler);
    const breakdown = await makeClient().stats.breakdown({
      merchantId: MERCHANT_ID,
      ...RANGE,
      events: 'PageView,Purchase',
      dimension: 'path',
      limit: 1,
    });
    expect(breakdown).toEqual(body);
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({
      merchantId: MERCHANT_ID,
      ...RANGE,
      events: 'PageView,Purchase',
      dimension: 'path',
      limit: '1',
    });
  });

  it("answers another partner's merchant with NotFoundError and a bad zone with BadRequestError", async () => {
    const { handler } = sequence('get', '/v1/partners/stats/summary', [
      () => reply({ code: 'MERCHANT_NOT_FOUND', message: 'No merchant' }, { status: 404 }),
      () => reply({ code: 'VALIDATION_ERROR', message: 'timezone: must be an IANA time zone' }, { status: 400 }),
    ]);
    server.use(handler);
    const client = makeClient();
    await expect(client.stats.summary({ merchantId: MERCHANT_ID, ...RANGE })).rejects.toBeInstanceOf(NotFoundError);
    const error = await client.stats
      .summary({ merchantId: MERCHANT_ID, ...RANGE, timezone: 'Mars/Olympus' })
      .catch((e) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toContain('timezone');
  });
});
