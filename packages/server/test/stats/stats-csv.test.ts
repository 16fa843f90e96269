// CSV answers of the statistics: asked by format=csv or Accept, RFC 4180 quoting, and values a
// spreadsheet would run as formulas defused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing/index.js';
import { api } from '../helpers/api.js';
import { type GeneratedTag, preverifiedTag } from '../helpers/fixtures.js';

const SHOP = 'https://shop.example';
const T0 = Date.UTC(2026, 4, 5, 9);
/** Paths a visitor controls: a formula, quotes and a comma, a line break, a leading minus and tab. */
const PATHS = ['/=HYPERLINK("http://evil.example","x")', '/a,"b"', '/line\nbreak', '/-2+3', '/@sum', '/plain'];

let server: TestServer;
let tag: GeneratedTag;

beforeAll(async () => {
  server = await startTestServer();
  tag = await preverifiedTag(server);
  const events = PATHS.flatMap((path, i) =>
    Array.from({ length: i + 1 }, (_, k) => ({
      id: `p${i}-${k}`,
      muid: `v${k}`,
      event_name: 'PageView',
      event_time: new Date(T0 + (i * 10 + k) * 60_000).toISOString(),
      data: { url: `${SHOP}/x?utm_campaign=${encodeURIComponent('=cmd|calc')}`, path, referrer: '' },
    })),
  );
  events.push({
    id: 'buy',
    muid: 'v0',
    event_name: 'Purchase',
    event_time: new Date(T0 + 100 * 60_000).toISOString(),
    data: { value: '12.50', currency: 'EUR' } as never,
  });
  const res = await api(server).post('/v1/collect', { tagId: tag.tagId, events });
  expect(res.status, res.text).toBe(202);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const path = (kind: string, params: Record<string, string>) =>
  `/v1/partners/stats/${kind}?${new URLSearchParams({ merchantId: tag.merchantId, startDate: '2026-05-05', endDate: '2026-05-05', ...params })}`;

/** RFC 4180 records: fields split on commas outside quotes, quotes doubled inside. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  expect(field, 'the last record ends with CRLF').toBe('');
  return rows;
}

describe('statistics as CSV', () => {
  it('breakdown: the JSON rows as records, quoted by RFC 4180, formulas defused', async () => {
    const partner = api(server, server.partner.apiKey);
    const json = await partner.get(path('breakdown', { dimension: 'path', limit: '3' }));
    const res = await partner.get(path('breakdown', { dimension: 'path', limit: '3', format: 'csv' }));
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="breakdown.csv"');
    const [header, ...records] = parseCsv(res.text);
    expect(header).toEqual(['value', 'events', 'visitors', 'visits']);
    const defuse = (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v);
    const rows = [...json.body.rows, json.body.other];
    expect(records).toEqual(
      rows.map((r: { value: string; events: number; visitors: number; visits: number }) => [
        defuse(r.value),
        String(r.events),
        String(r.visitors),
        String(r.visits),
      ]),
    );
    // All six paths, whole: the quotes, the comma and the line break survive the quoting.
    const all = parseCsv((await partner.get(path('breakdown', { dimension: 'path', format: 'csv' }))).text).map(
      (r) => r[0],
    );
    expect(all).toEqual(
      expect.arrayContaining([
        '/=HYPERLINK("http://evil.example","x")',
        '/a,"b"',
        '/line\nbreak',
        '/-2+3',
        '/@sum',
        '/plain',
      ]),
    );
    expect(res.text).not.toMatch(/(^|\r\n|,)=/);
  });

  it('a value that starts with a formula character is prefixed with a quote', async () => {
    const res = await api(server, server.partner.apiKey).get(
      path('breakdown', { dimension: 'utm_campaign', format: 'csv' }),
    );
    expect(parseCsv(res.text)[1]?.[0]).toBe(`'=cmd|calc`);
  });

  it('timeseries: one column per currency; Accept: text/csv asks too', async () => {
    const res = await api(server, server.partner.apiKey).get(path('timeseries', { interval: 'hour' }), {
      accept: 'text/csv',
    });
    expect(res.status, res.text).toBe(200);
    const [header, ...records] = parseCsv(res.text);
    expect(header).toEqual([
      'start',
      'events',
      'visitors',
      'pageviews',
      'purchases',
      'revenue_EUR',
      'visits',
      'bounce_rate',
      'visit_duration',
      'views_per_visit',
    ]);
    expect(records).toHaveLength(24);
    const total = records.reduce((n, r) => n + Number(r[1]), 0);
    expect(total).toBe(PATHS.reduce((n, _, i) => n + i + 1, 0) + 1);
    expect(records.map((r) => r[5]).filter((v) => v !== '0')).toEqual(['12.50']);
  });

  it('JSON stays the default; format=json is JSON; another format is 400; errors stay JSON', async () => {
    const partner = api(server, server.partner.apiKey);
    expect((await partner.get(path('breakdown', { dimension: 'path' }))).headers.get('content-type')).toContain(
      'application/json',
    );
    expect(
      (await partner.get(path('breakdown', { dimension: 'path', format: 'json' }), { accept: 'text/csv' })).headers.get(
        'content-type',
      ),
    ).toContain('application/json');
    const bad = await partner.get(path('breakdown', { dimension: 'path', format: 'xml' }));
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    const failed = await partner.get(path('breakdown', { dimension: 'planet', format: 'csv' }));
    expect(failed.status).toBe(400);
    expect(failed.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('dimension') });
  });
});
