/**
 * The seed straight into the statistics' ClickHouse, for scales PostgreSQL's copy would not fit on
 * this disk (`--seed-clickhouse`; 100M events are about 75 GB in PostgreSQL): the events of
 * lib/seed.ts (`seededEvent`: the same draws, visits, visitors, times, names and data), generated
 * by `INSERT INTO events_in SELECT ... FROM numbers(...)` as the server stores them (merchant,
 * time, muid, seq, name, the data's JSON text, consent, livemode), so the server's own view
 * (`events_typed`) types them into `events`. `seq` numbers each merchant's events from 1.
 */
import { channelOf } from '@partner/server/bench';
import type { Clickhouse } from './clickhouse.js';
import { log } from './log.js';
import { Progress } from './progress.js';
import {
  BLOCK,
  CLIENT_BOUNDS,
  CLIENTS,
  COUNTRIES,
  COUNTRY_BOUNDS,
  GAP_MIN_MS,
  GAP_SPREAD_MS,
  LATER_NAMES,
  LATER_PAGE_VIEW_BELOW,
  MERCHANT_SPREAD,
  MULBERRY_STEP,
  NEW_VISIT_BELOW,
  PATHS,
  type SeededEvent,
  SOURCE_BOUNDS,
  SOURCES,
  SPAN_MS,
  START_SPAN_MS,
  seededEvent,
  VISITORS,
  windowEnd,
} from './seed.js';

const U32 = 4294967295;
const UNIT = 4294967296;
/** Rows per INSERT: each statement a few seconds of both cores, its parts merged in the background. */
const CHUNK = 4_000_000;

/**
 * What the server's visit assignment (features/stats/visits.ts) makes of each of SOURCES' landings,
 * sent with every event of the visit: the referrer's host, the utm values (a `month` campaign gets
 * the visit's month appended) and GA4's channel, by the server's own `channelOf`.
 */
const LANDINGS = SOURCES.map((source) => {
  const query = new URLSearchParams(source.query);
  const landing = {
    referrerHost: source.referrer ? new URL(source.referrer).host.toLowerCase() : '',
    utmSource: query.get('utm_source') ?? '',
    utmMedium: query.get('utm_medium') ?? '',
    utmCampaign: query.get('utm_campaign') ?? '',
  };
  // The month (`YYYY-MM`) a campaign may get changes no channel rule's outcome.
  const campaign = landing.utmCampaign + (source.month ? '2026-01' : '');
  return { ...landing, channel: channelOf({ ...landing, utmCampaign: campaign, clickId: '' }) };
});

/** A visit's id in the ClickHouse seed: the merchant's index + 1 above bit 40, its first event's number below. */
const visitIdOf = (m: number, visit: number) => ((BigInt(m + 1) << 40n) + BigInt(visit)).toString();

/** SQL aliases: mulberry32's k-th output (lib/seed.ts `draw`) from the column `seed`, named `out`, in UInt64 arithmetic. */
function drawSql(seed: string, k: number, out: string): string {
  const step = ((k + 1) * MULBERRY_STEP) % 2 ** 32;
  return [
    `bitAnd(${seed} + ${step}, ${U32}) AS ${out}_a`,
    `bitAnd(bitXor(${out}_a, bitShiftRight(${out}_a, 15)) * bitOr(${out}_a, 1), ${U32}) AS ${out}_b`,
    `bitXor(${out}_b, bitAnd(${out}_b + bitAnd(bitXor(${out}_b, bitShiftRight(${out}_b, 7)) * bitOr(${out}_b, 61), ${U32}), ${U32})) AS ${out}_c`,
    `bitXor(${out}_c, bitShiftRight(${out}_c, 14)) AS ${out}`,
  ].join(',\n    ');
}

const positions = Array.from({ length: BLOCK }, (_, i) => i);
const later = positions.slice(1);
/** `multiIf` picking `column<i>` for the block position `b` (the row's own). */
const own = (column: string) => `multiIf(${later.map((i) => `b = ${i}, ${column}${i}`).join(', ')}, ${column}0)`;
const quote = (text: string) => `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
/** Whether position `i` of the block is a page view of the row's visit after its first event and before the row. */
const laterPageView = (i: number) => `${i} < b AND ${i} > st AND y${i} < ${LATER_PAGE_VIEW_BELOW}`;

/**
 * The seed's rows, one per `number` of `source` (the index `j` of lib/seed.ts's loop): `j` and the
 * columns of `events_in`. Parameters: merchants (Array(UUID)), start (ms), total, livemode. Event
 * `n`'s block is read whole: draws 0 (`x<i>`: a new visit, else the gap) and 1 (`y<i>`: the first
 * event's time, else a later event's name and page) of its 8 events; `st`, the position of the
 * last visit start at or before the row's `b`, is its visit's first event, whose draws 2-4 give
 * visitor, entry path and source.
 */
function rowsSql(source: string): string {
  const gap = (i: number) =>
    `${GAP_MIN_MS} + floor(${GAP_SPREAD_MS} * ((toFloat64(x${i}) - ${NEW_VISIT_BELOW}) / ${UNIT - NEW_VISIT_BELOW}) * ((toFloat64(x${i}) - ${NEW_VISIT_BELOW}) / ${UNIT - NEW_VISIT_BELOW}))`;
  const names = LATER_NAMES.slice(0, -1).map(([name, upTo]) => `yb < ${upTo}, '${name}'`);
  const pageView = `'{"path":"/p/', toString(path), '","url":"', shop, '/p/', toString(path)`;
  // Layers of subqueries: an alias is inlined wherever it is used, a subquery's column is not
  // (the query tree of one flat SELECT grows past ClickHouse's limit).
  const blockRows = `SELECT
      number AS j,
      length({merchants:Array(UUID)}) AS merchants,
      j % merchants AS m,
      intDiv(j, merchants) AS n,
      n % ${BLOCK} AS b,
      n - b AS base,
      bitAnd((m + 1) * ${MERCHANT_SPREAD}, ${U32}) AS key
    FROM ${source}`;
  const blockDraws = `SELECT *,
      ${positions.map((i) => `bitXor(key, base + ${i}) AS s${i},\n      ${drawSql(`s${i}`, 0, `x${i}`)},\n      ${drawSql(`s${i}`, 1, `y${i}`)}`).join(',\n      ')}
    FROM (${blockRows})`;
  const visits = `SELECT *,
      multiIf(${later
        .toReversed()
        .map((i) => `b >= ${i} AND x${i} < ${NEW_VISIT_BELOW}, ${i}`)
        .join(', ')}, 0) AS st,
      bitXor(key, base + st) AS sv
    FROM (${blockDraws})`;
  const visitDraws = `SELECT *,
      ${drawSql('sv', 2, 'visitor_draw')},
      ${drawSql('sv', 3, 'entry_draw')},
      ${drawSql('sv', 4, 'source_draw')},
      ${drawSql('sv', 7, 'country_draw')},
      ${drawSql('sv', 8, 'client_draw')},
      multiIf(${later.map((i) => `st = ${i}, y${i}`).join(', ')}, y0) AS start_draw,
      toInt64({start:Int64} + floor((toFloat64(toInt64(j) - toInt64(b - st) * merchants) + start_draw / ${UNIT}) * ${START_SPAN_MS} / {total:Float64})) AS start_ms,
      toInt64(start_ms + ${later.map((i) => `if(${i} <= b AND ${i} > st, ${gap(i)}, 0)`).join(' + ')}) AS ms,
      ${own('y')} AS yb,
      st = b AS first,
      multiIf(${later
        .filter((i) => i < BLOCK - 1)
        .toReversed()
        .map((i) => `${laterPageView(i)}, toInt64(intDiv(${PATHS} * y${i}, ${LATER_PAGE_VIEW_BELOW}))`)
        .join(', ')}, -1) AS later_page
    FROM (${visits})`;
  const events = `SELECT *,
      visitor_draw / ${UNIT} AS rv,
      entry_draw / ${UNIT} AS re,
      concat('u', toString(toUInt32(floor(${VISITORS} * rv * rv)))) AS muid,
      toUInt32(floor(${PATHS} * re * re * re)) AS entry,
      if(later_page < 0, entry, later_page) AS page,
      if(first, 'PageView', multiIf(${names.join(', ')}, '${LATER_NAMES[LATER_NAMES.length - 1]?.[0]}')) AS event_name,
      if(first, entry, if(event_name = 'PageView', toInt64(intDiv(${PATHS} * yb, ${LATER_PAGE_VIEW_BELOW})), page)) AS path,
      multiIf(${SOURCE_BOUNDS.slice(0, -1)
        .map((upTo, i) => `source_draw < ${upTo}, ${i + 1}`)
        .join(', ')}, ${SOURCES.length}) AS source,
      multiIf(${COUNTRY_BOUNDS.slice(0, -1)
        .map((upTo, i) => `country_draw < ${upTo}, ${i + 1}`)
        .join(', ')}, ${COUNTRIES.length}) AS country_i,
      multiIf(${CLIENT_BOUNDS.slice(0, -1)
        .map((upTo, i) => `client_draw < ${upTo}, ${i + 1}`)
        .join(', ')}, ${CLIENTS.length}) AS client_i
    FROM (${visitDraws})`;
  return `SELECT
    j,
    concat('https://shop', toString(m), '.example') AS shop,
    [${SOURCES.map((s) => quote(s.referrer)).join(', ')}][source] AS referrer_url,
    if([${SOURCES.map((s) => (s.month ? 1 : 0)).join(', ')}][source] = 1, formatDateTime(fromUnixTimestamp64Milli(start_ms, 'UTC'), '%Y-%m', 'UTC'), '') AS month,
    concat([${SOURCES.map((s) => quote(s.query)).join(', ')}][source], month) AS query,
    multiIf(
      first, concat(${pageView}, query, '","referrer":"', referrer_url, '"}'),
      event_name = 'PageView', concat(${pageView}, '","referrer":"', shop, '/p/', toString(page), '"}'),
      event_name = 'Purchase', concat('{"path":"/p/', toString(path), '","value":', toString(j % 100), '.5,"currency":"EUR"}'),
      concat('{"path":"/p/', toString(path), '"}')) AS data,
    {merchants:Array(UUID)}[m + 1] AS merchant_id,
    fromUnixTimestamp64Milli(ms, 'UTC') AS event_time,
    muid,
    n + 1 AS seq,
    bitShiftLeft(toUInt64(m + 1), 40) + toUInt64(base + st) AS visit,
    fromUnixTimestamp64Milli(start_ms, 'UTC') AS visit_start,
    event_name,
    [${LANDINGS.map((l) => quote(l.referrerHost)).join(', ')}][source] AS referrer,
    [${LANDINGS.map((l) => quote(l.utmSource)).join(', ')}][source] AS utm_source,
    [${LANDINGS.map((l) => quote(l.utmMedium)).join(', ')}][source] AS utm_medium,
    concat([${LANDINGS.map((l) => quote(l.utmCampaign)).join(', ')}][source], month) AS utm_campaign,
    [${LANDINGS.map((l) => quote(l.channel)).join(', ')}][source] AS channel,
    [${COUNTRIES.map(([c]) => quote(c)).join(', ')}][country_i] AS country,
    [${CLIENTS.map((c) => quote(c.device)).join(', ')}][client_i] AS device,
    [${CLIENTS.map((c) => quote(c.browser)).join(', ')}][client_i] AS browser,
    [${CLIENTS.map((c) => quote(c.os)).join(', ')}][client_i] AS os,
    'not_required' AS consent,
    {livemode:Bool} AS livemode
  FROM (${events})`;
}

const COLUMNS =
  'merchant_id, event_time, muid, seq, visit, visit_start, event_name, data, referrer, utm_source, utm_medium, utm_campaign, channel, country, device, browser, os, consent, livemode';

/** The sample of event indexes checked: `sample` spread over the seed, each a little off the even spacing. */
function sampleOf(total: number, sample = 2000): number[] {
  const js = Array.from({ length: sample }, (_, i) => Math.floor((i * total) / sample) + (i % 7));
  return [...new Set(js.filter((j) => j < total))];
}

function expectEqual(what: string, j: number, expected: Record<string, unknown>, row: Record<string, unknown>) {
  for (const [key, value] of Object.entries(expected)) {
    if (String(row[key]) !== String(value)) {
      throw new Error(`ClickHouse seed: event ${j} ${what} ${key} ${String(row[key])}, lib/seed.ts ${String(value)}`);
    }
  }
}

/**
 * Checks the SQL generator against lib/seed.ts on a sample spread over the seed: the rows for
 * `events_in` (merchant, time, muid, seq, name, data's JSON text) each equal, else throws.
 */
async function checkRows(
  clickhouse: Clickhouse,
  params: Record<string, unknown>,
  total: number,
  merchants: readonly string[],
  end: number,
): Promise<number> {
  const indexes = sampleOf(total);
  const rows = await clickhouse.query<Record<string, string>>(
    `SELECT j, toString(merchant_id) AS merchant_id, toUnixTimestamp64Milli(event_time) AS ms, muid, seq, event_name, data,
       toString(visit) AS visit, toUnixTimestamp64Milli(visit_start) AS visit_ms, referrer, utm_source, utm_medium,
       utm_campaign, channel, country, device, browser, os
     FROM (${rowsSql('(SELECT arrayJoin({sample:Array(UInt64)}) AS number)')}) ORDER BY j`,
    { ...params, sample: indexes },
    { timeoutMs: 60_000 },
  );
  for (const row of rows) {
    const e = seededEvent(Number(row.j), total, merchants.length, 0, end);
    const expected = {
      merchant_id: merchants[e.m],
      ms: e.time,
      muid: e.muid,
      seq: e.n + 1,
      event_name: e.name,
      data: e.data,
      ...visitOf(e),
    };
    expectEqual('row', e.n, expected, row);
  }
  if (rows.length !== indexes.length)
    throw new Error(`ClickHouse seed: checked ${rows.length} of ${indexes.length} rows`);
  return rows.length;
}

/** What `events_in` gets of a seeded event's visit and client (as features/stats/insert.ts sends them). */
function visitOf(e: SeededEvent) {
  const landing = LANDINGS[e.source] as (typeof LANDINGS)[number];
  const month = SOURCES[e.source]?.month ? new Date(e.visitStart).toISOString().slice(0, 7) : '';
  return {
    visit: visitIdOf(e.m, e.visit),
    visit_ms: e.visitStart,
    referrer: landing.referrerHost,
    utm_source: landing.utmSource,
    utm_medium: landing.utmMedium,
    utm_campaign: landing.utmCampaign + month,
    channel: landing.channel,
    country: e.country,
    device: e.device,
    browser: e.browser,
    os: e.os,
  };
}

/** What the server's view `events_typed` makes of a seeded event (migration 0002), as lib/seed.ts describes it. */
function typedOf(e: SeededEvent) {
  const data = JSON.parse(e.data) as { path: string; value?: number };
  const visit = visitOf(e);
  const none = (value: string) => value || '(none)';
  return {
    path: e.name === 'PageView' ? data.path : '',
    visit: visit.visit,
    visit_ms: visit.visit_ms,
    referrer: none(visit.referrer),
    utm_source: none(visit.utm_source),
    utm_medium: none(visit.utm_medium),
    utm_campaign: none(visit.utm_campaign),
    channel: visit.channel,
    country: none(visit.country),
    device: visit.device,
    browser: visit.browser,
    os: visit.os,
    currency: e.name === 'Purchase' ? 'EUR' : '',
    tenths: e.name === 'Purchase' ? Math.round((data.value ?? 0) * 10) : 0,
    revenue_scale: e.name === 'Purchase' ? 1 : 0,
  };
}

/**
 * After the insert: the sample's rows in `events`, as the server's view typed them, against
 * lib/seed.ts's events: time, visitor (`sipHash64` of lib/seed.ts's muid), name, path, referrer
 * host, utm values, currency and revenue each equal, else throws.
 */
async function checkTyped(
  clickhouse: Clickhouse,
  total: number,
  merchants: readonly string[],
  end: number,
): Promise<number> {
  const events = sampleOf(total).map((j) => seededEvent(j, total, merchants.length, 0, end));
  const [hashes] = await clickhouse.query<{ visitors: string[] }>(
    'SELECT arrayMap(muid -> toString(sipHash64(muid)), {muids:Array(String)}) AS visitors',
    { muids: events.map((e) => e.muid) },
  );
  const rows = await clickhouse.query<Record<string, string>>(
    `SELECT toString(merchant_id) AS merchant_id, seq, toUnixTimestamp64Milli(event_time) AS ms,
       toString(visitor) AS visitor, event_name, path, toString(visit) AS visit,
       toUnixTimestamp64Milli(visit_start) AS visit_ms, referrer, utm_source, utm_medium, utm_campaign, channel,
       country, device, browser, os, currency, toUInt64(revenue * 10) AS tenths, revenue_scale
     FROM events WHERE seq IN {seqs:Array(UInt64)}`,
    { seqs: [...new Set(events.map((e) => e.n + 1))] },
    { timeoutMs: 600_000 },
  );
  const byKey = new Map(rows.map((row) => [`${row.merchant_id}|${row.seq}`, row]));
  for (const [i, e] of events.entries()) {
    const row = byKey.get(`${merchants[e.m]}|${e.n + 1}`);
    if (!row) throw new Error(`ClickHouse seed: event ${e.n} of merchant ${e.m} not in events`);
    const expected = { ms: e.time, visitor: hashes?.visitors[i], event_name: e.name, ...typedOf(e) };
    expectEqual('typed', e.n, expected, row);
  }
  return events.length;
}

export interface ClickhouseSeed {
  events: number;
  seconds: number;
  /** Sample events checked equal to lib/seed.ts's: as rows for `events_in`, then as typed in `events`. */
  checked: number;
}

/**
 * Inserts `perMerchant` events for each merchant (ids in lib/seed.ts's order) into `events_in`
 * (the server's view types them into `events`), in chunks of CHUNK rows, after checking a sample
 * of the rows against lib/seed.ts, and checks the sample's typed rows after. Timed: the inserts alone.
 */
export async function seedClickhouse(
  clickhouse: Clickhouse,
  merchants: readonly string[],
  perMerchant: number,
  livemode: boolean,
): Promise<ClickhouseSeed> {
  const total = perMerchant * merchants.length;
  const end = windowEnd();
  const params = { merchants, start: end - SPAN_MS, total, livemode };
  await checkRows(clickhouse, params, total, merchants, end);
  const progress = new Progress('seed ClickHouse', total);
  const started = performance.now();
  for (let first = 0; first < total; first += CHUNK) {
    const count = Math.min(CHUNK, total - first);
    await clickhouse.command(
      `INSERT INTO events_in (${COLUMNS}) SELECT ${COLUMNS} FROM (${rowsSql('numbers({first:UInt64}, {count:UInt64})')})`,
      { ...params, first, count },
      { timeoutMs: 1_800_000 },
    );
    progress.add(count);
  }
  progress.finish();
  const seconds = (performance.now() - started) / 1000;
  log(
    `  stats: seeded ${total.toLocaleString('en-US')} events into ClickHouse in ${seconds.toFixed(1)} s (${Math.round(total / seconds).toLocaleString('en-US')} events/s)`,
  );
  const checked = await checkTyped(clickhouse, total, merchants, end);
  return { events: total, seconds, checked };
}
