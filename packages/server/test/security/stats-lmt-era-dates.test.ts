import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { collectOk, type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';

/**
 * Issue 51, finding 9: statistics over a range in a zone's local-mean-time era (Asia/Kolkata in
 * 1900, America/New_York in 1880) answered 500 with a stack: the zone's offset then was not on the
 * statistics' 15-minute grid. Stats dates are now 1970-01-01..2099-12-31 (a 400 naming the
 * parameter otherwise), and the two zones whose offsets stayed off multiples of 15 minutes into the
 * 1970s are refused on those dates too.
 */
let server: TestServer;
let tag: GeneratedTag;

beforeAll(async () => {
  server = await startTestServer();
  tag = await preverifiedTag(server);
  await collectOk(server, tag.tagId, [
    { event_name: 'PageView', event_time: '1970-01-01T00:00:00Z' },
    { event_name: 'PageView', event_time: '2099-12-31T23:59:59Z' },
  ]);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

type Query = Record<string, string>;

async function rest(kind: string, query: Query) {
  const params = new URLSearchParams({ merchantId: tag.merchantId, ...query });
  return api(server, server.partner.apiKey).get(`/v1/partners/stats/${kind}?${params}`);
}

async function trpc(kind: string, query: Query) {
  const input = encodeURIComponent(JSON.stringify({ merchantId: tag.merchantId, ...query }));
  return api(server, server.partner.apiKey).get(`/trpc/stats.${kind}?input=${input}`);
}

const refused: Array<[string, Query, string]> = [
  [
    'Asia/Kolkata in 1900 (the audit)',
    { startDate: '1900-01-01', endDate: '1900-01-31', timezone: 'Asia/Kolkata' },
    'startDate',
  ],
  [
    'America/New_York in 1880 (the audit)',
    { startDate: '1880-06-01', endDate: '1880-06-02', timezone: 'America/New_York' },
    'startDate',
  ],
  ['the day before the first', { startDate: '1969-12-31', endDate: '1970-01-01' }, 'startDate'],
  ['the day after the last', { startDate: '2099-12-31', endDate: '2100-01-01' }, 'endDate'],
  ['year 0001', { startDate: '0001-01-01', endDate: '0001-01-02' }, 'startDate'],
  [
    'Africa/Monrovia in 1971 (offset -00:44:30)',
    { startDate: '1971-06-01', endDate: '1971-06-30', timezone: 'Africa/Monrovia' },
    'startDate',
  ],
  [
    'Pacific/Kiritimati in 1975 (offset -10:40)',
    { startDate: '1975-01-01', endDate: '1975-01-31', timezone: 'Pacific/Kiritimati' },
    'startDate',
  ],
];

describe('a stats date the statistics cannot place is a 400 naming the parameter', () => {
  for (const [what, query, parameter] of refused) {
    it(`${what}: REST and tRPC, summary and timeseries`, async () => {
      for (const kind of ['summary', 'timeseries']) {
        const res = await rest(kind, query);
        expect([res.status, res.body]).toEqual([
          400,
          { message: expect.stringContaining(`${parameter}: `), code: 'VALIDATION_ERROR' },
        ]);
        expect(res.text).not.toContain('    at ');
        const call = await trpc(kind, query);
        expect([call.status, call.body.error?.data?.code]).toEqual([400, 'VALIDATION_ERROR']);
        expect(call.body.error.message).toContain(`${parameter}: `);
      }
    });
  }

  it('the breakdown too', async () => {
    const res = await rest('breakdown', { ...refused[0]![1], dimension: 'path' });
    expect([res.status, res.body.code, res.body.message]).toEqual([
      400,
      'VALIDATION_ERROR',
      expect.stringContaining('startDate: startDate must be from 1970-01-01 to 2099-12-31'),
    ]);
  });

  it('compare=previous whose period before starts before 1970-01-01 names compare', async () => {
    const res = await rest('summary', { startDate: '1970-01-01', endDate: '1970-01-31', compare: 'previous' });
    expect([res.status, res.body.code, res.body.message]).toEqual([
      400,
      'VALIDATION_ERROR',
      expect.stringContaining('compare: '),
    ]);
  });

  it('the bounds themselves answer, in UTC and in a zone (events at both ends counted)', async () => {
    const first = await rest('summary', { startDate: '1970-01-01', endDate: '1970-01-01' });
    expect([first.status, first.body.totals?.events]).toEqual([200, 1]);
    const last = await rest('timeseries', { startDate: '2099-12-31', endDate: '2099-12-31', interval: 'hour' });
    expect([last.status, last.body.points?.at(-1)?.events]).toEqual([200, 1]);
    const kolkata = await trpc('summary', { startDate: '1970-01-01', endDate: '1970-01-31', timezone: 'Asia/Kolkata' });
    expect(kolkata.status).toBe(200);
    const monrovia = await rest('summary', {
      startDate: '1972-01-08',
      endDate: '1972-02-01',
      timezone: 'Africa/Monrovia',
    });
    expect(monrovia.status).toBe(200);
  });
});
