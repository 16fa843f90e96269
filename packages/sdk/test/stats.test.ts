import { describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError, PartnerError, type StatsSummary, type StatsTimeseries } from '../src/index.js';
import { makeClient, reply, sequence, server, useMsw } from './helpers.js';

useMsw();

const MERCHANT_ID = '6f1c1f2e-0c5b-4d52-9a3a-1f1f5b0c2d11';
const RANGE = { startDate: '2026-11-01', endDate: '2026-11-07', timezone: 'America/New_York' };
const COUNTS = {
  events: 3,
  visitors: 2,
  pageviews: 2,
  purchases: 1,
  revenue: [{ currency: 'EUR', amount: '10.50' }],
  visits: 2,
  bounceRate: 0.5,
  visitDuration: 42.5,
  viewsPerVisit: 1,
};
const TOTALS = {
  ...COUNTS,
  botEvents: 7,
  goals: [{ goalId: 'g1', name: 'Signed up', conversions: 3, visitors: 2, conversionRate: 1 }],
};

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
      points: [{ start: '2026-11-01T00:00:00-04:00', ...COUNTS }],
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
      rows: [{ value: '/', events: 2, visitors: 2, visits: 2 }],
      other: { value: 'other', events: 1, visitors: 1, visits: 1 },
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

  it('sends filters in the wire form, escaping ; | and backslashes in values', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/stats/breakdown', [
      () => reply({ range: RANGE, dimension: 'channel', rows: [], other: null }),
      () => reply({ range: RANGE, dimension: 'channel', rows: [], other: null }),
    ]);
    server.use(handler);
    const client = makeClient();
    await client.stats.breakdown({
      merchantId: MERCHANT_ID,
      ...RANGE,
      dimension: 'channel',
      filters: [
        { dimension: 'country', values: ['DE', 'AT'] },
        { dimension: 'utm_campaign', values: 'a;b|c\\d' },
        { dimension: 'device', values: ['mobile'], not: true },
      ],
    });
    expect(seen[0]?.url.searchParams.get('filters')).toBe('country==DE|AT;utm_campaign==a\\;b\\|c\\\\d;device!=mobile');
    await client.stats.breakdown({ merchantId: MERCHANT_ID, ...RANGE, dimension: 'channel', filters: 'os==iOS' });
    expect(seen[1]?.url.searchParams.get('filters')).toBe('os==iOS');
  });

  it('realtime sends GET /v1/partners/stats/realtime with the merchant only', async () => {
    const body = { visitors: 3, pageviews: 5, pages: [{ value: '/', visitors: 2 }] };
    const { handler, seen } = sequence('get', '/v1/partners/stats/realtime', [() => reply(body)]);
    server.use(handler);
    expect(await makeClient().stats.realtime({ merchantId: MERCHANT_ID })).toEqual(body);
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({ merchantId: MERCHANT_ID });
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

  it.each([
    // After the clocks went back on 1 November: 03:30 UTC is 22:30 the evening before in New York.
    ['America/New_York', '2026-11-02T03:30:00Z', '2026-11-08T12:00:00Z', '2026-11-01', '2026-11-08'],
    // Tokyo is ahead: 20:00 UTC on 31 October is already 1 November there.
    ['Asia/Tokyo', '2026-10-31T20:00:00Z', '2026-11-07T14:59:59Z', '2026-11-01', '2026-11-07'],
    ['UTC', '2026-11-01T00:00:00Z', '2026-11-07T23:59:59.999Z', '2026-11-01', '2026-11-07'],
  ])('sends a Date as its calendar date in the call’s zone (%s)', async (timezone, start, end, startDate, endDate) => {
    const { handler, seen } = sequence('get', '/v1/partners/stats/timeseries', [
      () => reply({ range: RANGE, interval: 'day', points: [] }),
    ]);
    server.use(handler);
    await makeClient().stats.timeseries({
      merchantId: MERCHANT_ID,
      startDate: new Date(start),
      endDate: new Date(end),
      timezone,
    });
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({
      merchantId: MERCHANT_ID,
      startDate,
      endDate,
      timezone,
    });
  });

  it('reads a Date in UTC when no zone is given, as the server reads the dates, and mixes with strings', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/stats/summary', [
      () => reply({ range: RANGE, totals: TOTALS, previous: null }),
    ]);
    server.use(handler);
    // 23:30 in New York on 1 November is 04:30 UTC on the 2nd.
    await makeClient().stats.summary({
      merchantId: MERCHANT_ID,
      startDate: '2026-10-26',
      endDate: new Date('2026-11-01T23:30:00-05:00'),
    });
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({
      merchantId: MERCHANT_ID,
      startDate: '2026-10-26',
      endDate: '2026-11-02',
    });
  });

  it('rejects an invalid Date, or a Date with a zone Intl does not know, before sending anything', async () => {
    const { handler, seen } = sequence('get', '/v1/partners/stats/summary', [() => reply({})]);
    server.use(handler);
    const client = makeClient();
    const invalid = await client.stats
      .summary({ merchantId: MERCHANT_ID, startDate: new Date('nope'), endDate: '2026-11-07' })
      .catch((e) => e);
    expect(invalid).toBeInstanceOf(PartnerError);
    expect(invalid.message).toContain('startDate');
    const zone = await client.stats
      .summary({ merchantId: MERCHANT_ID, startDate: new Date(), endDate: new Date(), timezone: 'Mars/Olympus' })
      .catch((e) => e);
    expect(zone).toBeInstanceOf(PartnerError);
    expect(zone.message).toContain('Mars/Olympus');
    expect(seen).toHaveLength(0);
  });
});
