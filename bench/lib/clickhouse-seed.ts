/**
 * The seed straight into the statistics' ClickHouse, for scales PostgreSQL's copy would not fit on
 * this disk (`--seed-clickhouse`; 100M events are about 75 GB in PostgreSQL): the events of
 * lib/seed.ts (`seededEvent`: the same draws, names, visitors, times, paths and values), generated
 * by `INSERT INTO events SELECT ... FROM numbers(...)` and typed as the server types a stored event
 * (features/stats/insert.ts): page views with their path and `(none)` referrer and utm values,
 * purchases with their value in EUR (scale 1), the visitor `sipHash64(muid)` as the server's
 * insert makes it. `seq` numbers each merchant's events from 1.
 */
import { STATS_NONE_VALUE } from '@partner/shared-schemas';
import type { Clickhouse } from './clickhouse.js';
import { log } from './log.js';
import { Progress } from './progress.js';
import {
  CUMULATIVE_MIX,
  DAYS,
  EVENT_MIX,
  MERCHANT_SPREAD,
  MUIDS,
  MULBERRY_STEP,
  PATHS,
  seededEvent,
  windowEnd,
} from './seed.js';

const U32 = 4294967295;
const DAY_MS = 86_400_000;
/** Rows per INSERT: each statement a few seconds of both cores, its parts merged in the background. */
const CHUNK = 4_000_000;

/** SQL aliases `r<k>`: mulberry32's k-th output (lib/seed.ts eventDraws) from the alias `seed`, in UInt64 arithmetic. */
function drawsSql(count: number): string {
  const lines: string[] = [];
  for (let k = 0; k < count; k++) {
    const step = ((k + 1) * MULBERRY_STEP) % 2 ** 32;
    lines.push(
      `bitAnd(seed + ${step}, ${U32}) AS a${k}`,
      `bitAnd(bitXor(a${k}, bitShiftRight(a${k}, 15)) * bitOr(a${k}, 1), ${U32}) AS b${k}`,
      `bitXor(b${k}, bitAnd(b${k} + bitAnd(bitXor(b${k}, bitShiftRight(b${k}, 7)) * bitOr(b${k}, 61), ${U32}), ${U32})) AS c${k}`,
      `bitXor(c${k}, bitShiftRight(c${k}, 14)) AS r${k}`,
    );
  }
  return lines.join(',\n    ');
}

/** `multiIf` over EVENT_MIX's cumulative shares (the literals print the same doubles lib/seed.ts compares with). */
const nameSql = `multiIf(${CUMULATIVE_MIX.map(([name, upTo]) => `r1 / 4294967296 < ${String(upTo)}, '${name}'`).join(', ')}, '${EVENT_MIX[0]?.[0]}')`;

/**
 * The seed's rows, one per `number` of `source` (the index `j` of lib/seed.ts's loop), with the
 * events table's columns. Parameters: merchants (Array(UUID)), start and span (ms), total, livemode.
 */
function rowsSql(source: string): string {
  return `SELECT
    number AS j,
    j % length({merchants:Array(UUID)}) AS m,
    intDiv(j, length({merchants:Array(UUID)})) AS n,
    bitXor(bitAnd((m + 1) * ${MERCHANT_SPREAD}, ${U32}), n) AS seed,
    ${drawsSql(3)},
    {merchants:Array(UUID)}[m + 1] AS merchant_id,
    fromUnixTimestamp64Milli(toInt64({start:Int64} + floor((toFloat64(j) + r0 / 4294967296) * {span:Float64} / {total:Float64})), 'UTC') AS event_time,
    concat('u', toString(toUInt32(floor(r2 / 4294967296 * ${MUIDS})))) AS muid,
    sipHash64(muid) AS visitor,
    n + 1 AS seq,
    ${nameSql} AS event_name,
    event_name = 'PageView' AS page_view,
    event_name = 'Purchase' AS purchase,
    if(page_view, concat('/p/', toString(j % ${PATHS})), '') AS path,
    if(page_view, '${STATS_NONE_VALUE}', '') AS referrer,
    referrer AS utm_source,
    referrer AS utm_medium,
    referrer AS utm_campaign,
    if(purchase, 'EUR', '') AS currency,
    if(purchase, toDecimal256(j % 100, 30) + toDecimal256('0.5', 30), toDecimal256(0, 30)) AS revenue,
    if(purchase, 1, 0) AS revenue_scale,
    'not_required' AS consent,
    {livemode:Bool} AS livemode
  FROM ${source}`;
}

const COLUMNS =
  'merchant_id, event_time, visitor, seq, event_name, path, referrer, utm_source, utm_medium, utm_campaign, currency, revenue, revenue_scale, consent, livemode';

/**
 * Checks the SQL generator against lib/seed.ts on `sample` events spread over the seed: merchant,
 * time, name, muid and path each equal, else throws.
 */
async function checkAgainstSeed(
  clickhouse: Clickhouse,
  params: Record<string, unknown>,
  total: number,
  merchants: readonly string[],
  end: number,
  sample = 2000,
): Promise<number> {
  const js = Array.from({ length: sample }, (_, i) => Math.floor((i * total) / sample) + (i % 7));
  const indexes = [...new Set(js.filter((j) => j < total))];
  const rows = await clickhouse.query<{
    j: string;
    merchant_id: string;
    ms: string;
    event_name: string;
    path: string;
    muid: string;
  }>(
    `SELECT j, merchant_id, toUnixTimestamp64Milli(event_time) AS ms, event_name, path, muid
     FROM (${rowsSql('(SELECT arrayJoin({sample:Array(UInt64)}) AS number)')}) ORDER BY j`,
    { ...params, sample: indexes },
    { timeoutMs: 60_000 },
  );
  let checked = 0;
  for (const row of rows) {
    const e = seededEvent(Number(row.j), total, merchants.length, 0, end);
    const expected = {
      merchant_id: merchants[e.m],
      ms: String(e.time),
      event_name: e.name,
      path: e.name === 'PageView' ? e.path : '',
      muid: e.muid,
    };
    for (const [key, value] of Object.entries(expected)) {
      if (String(row[key as keyof typeof row]) !== String(value)) {
        throw new Error(
          `ClickHouse seed: event ${row.j} ${key} ${String(row[key as keyof typeof row])}, lib/seed.ts ${String(value)}`,
        );
      }
    }
    checked++;
  }
  if (checked !== indexes.length) throw new Error(`ClickHouse seed: checked ${checked} of ${indexes.length} events`);
  return checked;
}

export interface ClickhouseSeed {
  events: number;
  seconds: number;
  /** Events checked equal to lib/seed.ts's (merchant, time, name, muid, path). */
  checked: number;
}

/**
 * Inserts `perMerchant` events for each merchant (ids in lib/seed.ts's order) into `events`, in
 * chunks of CHUNK rows, after checking a sample against lib/seed.ts. Timed: the inserts alone.
 */
export async function seedClickhouse(
  clickhouse: Clickhouse,
  merchants: readonly string[],
  perMerchant: number,
  livemode: boolean,
): Promise<ClickhouseSeed> {
  const total = perMerchant * merchants.length;
  const end = windowEnd();
  const span = DAYS * DAY_MS;
  const params = { merchants, start: end - span, span, total, livemode };
  const checked = await checkAgainstSeed(clickhouse, params, total, merchants, end);
  const progress = new Progress('seed ClickHouse', total);
  const started = performance.now();
  for (let first = 0; first < total; first += CHUNK) {
    const count = Math.min(CHUNK, total - first);
    await clickhouse.command(
      `INSERT INTO events (${COLUMNS}) SELECT ${COLUMNS} FROM (${rowsSql('numbers({first:UInt64}, {count:UInt64})')})`,
      { ...params, first, count },
      { timeoutMs: 1_800_000 },
    );
    progress.add(count);
  }
  progress.finish();
  const seconds = (performance.now() - started) / 1000;
  log(`  stats: seeded ${total.toLocaleString('en-US')} events into ClickHouse in ${seconds.toFixed(1)} s`);
  return { events: total, seconds, checked };
}
