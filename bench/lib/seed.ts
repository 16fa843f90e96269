/**
 * The bench's events, deterministic (mulberry32 keyed by merchant index and event number, no
 * state): visits of 1-8 events (2.9 on average, 32% of one), each by one visitor of a skewed pool,
 * a PageView with a source first, the others seconds to minutes apart (`seededEvent`). COPYed into
 * PostgreSQL here; lib/clickhouse-seed.ts generates the same events in SQL.
 */
import type { Sql } from 'postgres';
import { Progress } from './progress.js';

/** 12 event names with a realistic skew (page views dominate, purchases are rare). */
const EVENT_MIX: ReadonlyArray<readonly [string, number]> = [
  ['PageView', 0.4],
  ['ViewContent', 0.16],
  ['Search', 0.09],
  ['AddToCart', 0.08],
  ['Login', 0.05],
  ['BeginCheckout', 0.04],
  ['NewsletterOpen', 0.04],
  ['VideoPlay', 0.04],
  ['Purchase', 0.03],
  ['Logout', 0.03],
  ['SignUp', 0.02],
  ['RemoveFromCart', 0.02],
];
const DAYS = 90;
const DAY_MS = 86_400_000;
/** Distinct page paths: `/p/0` ... `/p/976`. */
export const PATHS = 977;
/** Each merchant's visitors are drawn from muids `u0` ... `u499999`, the low ones far more often. */
export const VISITORS = 500_000;
/** Events in a block: a visit never crosses one, so every event's visit is found among its 7 predecessors. */
export const BLOCK = 8;
/** A block's later event starts a new visit when its draw 0 is below this (of 2^32: P_NEW = 1/4). */
export const NEW_VISIT_BELOW = 2 ** 30;
/** The gap before a visit's next event: 5 s plus 295 s times the square of a uniform draw. */
export const GAP_MIN_MS = 5_000;
export const GAP_SPREAD_MS = 295_000;
/** A visit's longest duration: its first event's time is drawn over the window shortened by it. */
const MAX_VISIT_MS = (BLOCK - 1) * (GAP_MIN_MS + GAP_SPREAD_MS);
/** The window's length and the span over which the visits' first events fall. */
export const SPAN_MS = DAYS * DAY_MS;
export const START_SPAN_MS = SPAN_MS - MAX_VISIT_MS;

/** The last whole UTC day of the seeded window ends at this instant (today's midnight). */
export const windowEnd = (): number => Math.floor(Date.now() / DAY_MS) * DAY_MS;

const UNIT = 2 ** 32;

/** Cumulative upper bounds over [0, 2^32) of the shares, in order (the last one 2^32). */
function bounds(shares: readonly number[]): number[] {
  let sum = 0;
  return shares.map((share, i) => {
    sum += share;
    return i === shares.length - 1 ? UNIT : Math.round(sum * UNIT);
  });
}

/**
 * A visit's first event is a PageView; the names of its other events are drawn so that the whole
 * mix is EVENT_MIX's: of all events a share `first` (11/32: 1 + 7/4 visits per block of 8) starts
 * a visit, so a later event is a PageView with (0.40 - first) / (1 - first), about 8.6%, and any
 * other name with its EVENT_MIX share / (1 - first). Integer bounds: JavaScript and SQL compare alike.
 */
export const LATER_NAMES = (() => {
  const first = (1 + ((BLOCK - 1) * NEW_VISIT_BELOW) / UNIT) / BLOCK;
  const shares = EVENT_MIX.map(([name, share]) => (name === 'PageView' ? share - first : share) / (1 - first));
  const upTo = bounds(shares);
  return EVENT_MIX.map(([name], i) => [name, upTo[i] as number] as const);
})();
/** A later event is a PageView below this bound (LATER_NAMES' first). */
export const LATER_PAGE_VIEW_BELOW = LATER_NAMES[0]?.[1] as number;

/**
 * Where a visit comes from: the referrer its first page view carries (as the tag sends it: origin
 * and path, `''` when there is none) and the query of its landing URL (the tag keeps only utm_*
 * parameters; `month` appends the visit's month, `YYYY-MM`, UTC). Paid search is tagged by utm:
 * the tag drops a gclid.
 */
export const SOURCES: ReadonlyArray<{ share: number; referrer: string; query: string; month: boolean }> = [
  { share: 0.36, referrer: 'https://www.google.com/', query: '', month: false },
  { share: 0.26, referrer: '', query: '', month: false },
  {
    share: 0.1,
    referrer: '',
    query: '?utm_source=newsletter&utm_medium=email&utm_campaign=',
    month: true,
  },
  { share: 0.09, referrer: 'https://www.facebook.com/', query: '', month: false },
  { share: 0.06, referrer: 'https://www.bing.com/', query: '', month: false },
  {
    share: 0.05,
    referrer: 'https://www.google.com/',
    query: '?utm_source=google&utm_medium=cpc&utm_campaign=brand',
    month: false,
  },
  { share: 0.05, referrer: 'https://t.co/abc', query: '', month: false },
  { share: 0.03, referrer: 'https://news.ycombinator.com/', query: '', month: false },
];
/** SOURCES' cumulative bounds over [0, 2^32). */
export const SOURCE_BOUNDS = bounds(SOURCES.map((s) => s.share));

/**
 * A visit's client, as the server's enrichment would have told it from the request (country of
 * the address, device, browser and system of the user agent, names as bowser gives them): its
 * country (`''`: unknown) from draw 7 of its first event, the rest from draw 8.
 */
export const COUNTRIES: ReadonlyArray<readonly [string, number]> = [
  ['US', 0.3],
  ['DE', 0.15],
  ['GB', 0.1],
  ['FR', 0.08],
  ['IN', 0.07],
  ['CA', 0.06],
  ['NL', 0.05],
  ['BR', 0.05],
  ['JP', 0.04],
  ['ES', 0.04],
  ['AU', 0.03],
  ['', 0.03],
];
export const COUNTRY_BOUNDS = bounds(COUNTRIES.map(([, share]) => share));
export const CLIENTS: ReadonlyArray<{ share: number; device: string; browser: string; os: string }> = [
  { share: 0.22, device: 'desktop', browser: 'Chrome', os: 'Windows' },
  { share: 0.08, device: 'desktop', browser: 'Chrome', os: 'macOS' },
  { share: 0.06, device: 'desktop', browser: 'Safari', os: 'macOS' },
  { share: 0.06, device: 'desktop', browser: 'Microsoft Edge', os: 'Windows' },
  { share: 0.03, device: 'desktop', browser: 'Firefox', os: 'Windows' },
  { share: 0.01, device: 'desktop', browser: 'Firefox', os: 'Linux' },
  { share: 0.22, device: 'mobile', browser: 'Safari', os: 'iOS' },
  { share: 0.2, device: 'mobile', browser: 'Chrome', os: 'Android' },
  { share: 0.04, device: 'mobile', browser: 'Samsung Internet for Android', os: 'Android' },
  { share: 0.05, device: 'tablet', browser: 'Safari', os: 'iOS' },
  { share: 0.03, device: 'tablet', browser: 'Chrome', os: 'Android' },
];
export const CLIENT_BOUNDS = bounds(CLIENTS.map((c) => c.share));

/** mulberry32's increment: its k-th output (from 0) is `mulberryMix(seed + (k + 1) * MULBERRY_STEP)`. */
export const MULBERRY_STEP = 0x6d2b79f5;
/** A 32-bit odd constant spreading the merchant index over the seed's bits. */
export const MERCHANT_SPREAD = 0x9e3779b1;

/** mulberry32's output function of a state (mod 2^32), as an unsigned 32-bit integer. */
function mulberryMix(state: number): number {
  let t = Math.imul(state ^ (state >>> 15), state | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

/**
 * Draw `k` of event `n` of the merchant whose key is `key` (`(m + 1) * MERCHANT_SPREAD` mod 2^32):
 * mulberry32 seeded by both, so a seed never depends on what ran before it (two databases seeded
 * alike hold the same events, and lib/clickhouse-seed.ts generates them in SQL). The draws of an
 * event: 0 whether it starts a visit, else its gap; 1 its first event's time, else its name (and
 * a page view's path); a visit's first event's 2 visitor, 3 entry path, 4 source, 7 country,
 * 8 device, browser and system; 5 and 6 its id.
 */
function draw(key: number, n: number, k: number): number {
  return mulberryMix((((key ^ n) >>> 0) + (k + 1) * MULBERRY_STEP) >>> 0);
}

/** The gap (ms) before a visit's event whose first draw is `x` (at least NEW_VISIT_BELOW). */
const gapOf = (x: number) => {
  const u = (x - NEW_VISIT_BELOW) / (UNIT - NEW_VISIT_BELOW);
  return GAP_MIN_MS + Math.floor(GAP_SPREAD_MS * u * u);
};

/** A later page view's path (its draw `y` below LATER_PAGE_VIEW_BELOW): uniform over PATHS. */
const laterPathOf = (y: number) => Math.floor((PATHS * y) / LATER_PAGE_VIEW_BELOW);

function laterName(y: number): string {
  for (const [name, upTo] of LATER_NAMES) if (y < upTo) return name;
  return LATER_NAMES[LATER_NAMES.length - 1]?.[0] as string;
}

function pick(r: number, upTo: readonly number[]): number {
  const i = upTo.findIndex((bound) => r < bound);
  return i < 0 ? upTo.length - 1 : i;
}

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

/** One seeded event (lib/clickhouse-seed.ts writes the same in SQL). */
export interface SeededEvent {
  /** The merchant's index among the seeded merchants, and the event's number among its events. */
  m: number;
  n: number;
  /** The number of its visit's first event (`n` for a visit's first). */
  visit: number;
  time: number;
  name: string;
  muid: string;
  /** A page view's path; for another event, the path of its visit's last page view before it. */
  path: string;
  /** The event's data as JSON text (PageView: path, url, referrer as the tag sends them). */
  data: string;
  id: string;
  /** Its visit's first event's time, source (SOURCES' index) and client (`country` '' when unknown). */
  visitStart: number;
  source: number;
  country: string;
  device: string;
  browser: string;
  os: string;
}

/**
 * Event `j` of a seed of `total` events over `merchants` merchants (each already holding
 * `firstEvent`): the merchants take turns, event `n` of merchant `m`. Events come in visits: event
 * `n` starts one when it is its block's first (n % BLOCK = 0), the seed's first (`firstEvent`, so
 * a visit never spans two seeds) or its draw 0 is below NEW_VISIT_BELOW; else it belongs to the
 * visit of the last start before it. The visit's first event falls where event `j` of a uniform
 * seed would (over START_SPAN_MS), each next one a gap later (5-300 s); all carry the visit's muid
 * (`u<floor(VISITORS * r^2)>`: some return often). The first is a PageView of an entry path
 * (`floor(PATHS * r^3)`: a few paths get most entries) with the visit's source (SOURCES); a later
 * page view any path, its referrer the shop's page before it. Its id is a UUID of its draws,
 * merchant index and number (unique per merchant by construction).
 */
export function seededEvent(j: number, total: number, merchants: number, firstEvent: number, end: number): SeededEvent {
  const m = j % merchants;
  const n = firstEvent + Math.floor(j / merchants);
  const key = Math.imul(m + 1, MERCHANT_SPREAD) >>> 0;
  const b = n % BLOCK;
  const base = n - b;
  let st = b;
  while (st > 0 && base + st !== firstEvent && draw(key, base + st, 0) >= NEW_VISIT_BELOW) st--;
  const visit = base + st;
  const startTime =
    end - SPAN_MS + Math.floor(((j - (b - st) * merchants + draw(key, visit, 1) / UNIT) * START_SPAN_MS) / total);
  let time = startTime;
  const re = draw(key, visit, 3) / UNIT;
  const entry = Math.floor(PATHS * re * re * re);
  // The path of the visit's last page view before event n.
  let page = entry;
  for (let i = st + 1; i <= b; i++) {
    time += gapOf(draw(key, base + i, 0));
    const y = draw(key, base + i, 1);
    if (i < b && y < LATER_PAGE_VIEW_BELOW) page = laterPathOf(y);
  }
  const rv = draw(key, visit, 2) / UNIT;
  const muid = `u${Math.floor(VISITORS * rv * rv)}`;
  const shop = `https://shop${m}.example`;
  let name = 'PageView';
  let path: number;
  let data: string;
  const sourceIndex = pick(draw(key, visit, 4), SOURCE_BOUNDS);
  const client = CLIENTS[pick(draw(key, visit, 8), CLIENT_BOUNDS)] as (typeof CLIENTS)[number];
  if (st === b) {
    const source = SOURCES[sourceIndex] as (typeof SOURCES)[number];
    const query = source.query + (source.month ? new Date(startTime).toISOString().slice(0, 7) : '');
    path = entry;
    data = `{"path":"/p/${path}","url":"${shop}/p/${path}${query}","referrer":"${source.referrer}"}`;
  } else {
    const y = draw(key, n, 1);
    name = laterName(y);
    path = name === 'PageView' ? laterPathOf(y) : page;
    if (name === 'PageView') data = `{"path":"/p/${path}","url":"${shop}/p/${path}","referrer":"${shop}/p/${page}"}`;
    else if (name === 'Purchase') data = `{"path":"/p/${path}","value":${j % 100}.5,"currency":"EUR"}`;
    else data = `{"path":"/p/${path}"}`;
  }
  const r5 = draw(key, n, 5);
  const r6 = draw(key, n, 6);
  return {
    m,
    n,
    visit,
    time,
    name,
    muid,
    path: `/p/${path}`,
    data,
    id: `${hex(r5, 8)}-${hex(r6 >>> 16, 4)}-4${hex(r6 & 0xfff, 3)}-${hex(8 + ((m >>> 12) & 3), 1)}${hex(m & 0xfff, 3)}-${hex(n, 12)}`,
    visitStart: startTime,
    source: sourceIndex,
    country: COUNTRIES[pick(draw(key, visit, 7), COUNTRY_BOUNDS)]?.[0] as string,
    device: client.device,
    browser: client.browser,
    os: client.os,
  };
}

export interface SeedMerchant {
  merchantId: string;
  tagId: string;
}

/**
 * Adds `perMerchant` events to every merchant with COPY (CSV), in `seededEvent`'s order (with
 * `client`, each one's visit's client in `events.client` as the API stores it: migration 0038): the
 * merchants interleaved, their visits' first events in time order (a visit's later events a few
 * minutes after), as the collector stores them when they happen (a merchant's newest events sit
 * together at the end of the table, not scattered over all of it). The triggers on events (day
 * counts, ordering, notifications) run as for any insert. Deterministic (`seededEvent`):
 * `firstEvent` is what every merchant holds already.
 */
export async function seedEvents(
  sql: Sql,
  merchants: readonly SeedMerchant[],
  perMerchant: number,
  label: string,
  firstEvent = 0,
  client = true,
) {
  const total = perMerchant * merchants.length;
  const progress = new Progress(label, total);
  const end = windowEnd();
  // A transaction numbers at most 8192 events of a merchant (migration 0026): one COPY per chunk.
  const chunk = Math.min(250_000, 8192 * merchants.length);
  const started = Date.now();
  // A bulk load: the indexes of events are dropped and built again after the load (a sorted build
  // is many times faster than millions of random b-tree inserts); the triggers on events run as
  // for any insert. Since 0028 events has no unique key: the ids go into event_ids after the load,
  // as storeEvents puts them there, so the tables are those the API would have written.
  const indexes = await sql<{ name: string; definition: string }[]>`
    select indexname as name, indexdef as definition from pg_indexes
    where schemaname = current_schema() and tablename = 'events'`;
  for (const index of indexes) await sql.unsafe(`drop index ${index.name}`);
  // `seq` is sent (the COPY transaction's own numbers, as `storeEvents` takes them: migration
  // 0026), so the per-row trigger that numbers events inserted without one stays out of a bulk load.
  for (let done = 0; done < total; done += chunk) {
    const count = Math.min(chunk, total - done);
    await sql.begin(async (tx) => {
      const [first] = await tx<{ floor: string }[]>`select events_seq_floor(pg_current_xact_id())::text as floor`;
      const seqs = merchants.map(() => Number(first?.floor) - 1);
      const stream = await (client
        ? tx`copy events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq, client)
          from stdin with (format csv)`
        : tx`copy events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
          from stdin with (format csv)`
      ).writable();
      const finished = new Promise<void>((resolve, reject) => {
        stream.on('finish', resolve);
        stream.on('error', reject);
      });
      let buffer = '';
      for (let i = 0; i < count; i++) {
        const e = seededEvent(done + i, total, merchants.length, firstEvent, end);
        const merchant = merchants[e.m] as SeedMerchant;
        const seq = (seqs[e.m] as number) + 1;
        seqs[e.m] = seq;
        // The data as CSV: its quotes doubled (purchases carry a currency: the statistics count their revenue).
        const data = e.data.replaceAll('"', '""');
        // The client as `storeEvents` writes it (`country|device|browser|os`): no comma or quote in it.
        const tail = client ? `,${e.country}|${e.device}|${e.browser}|${e.os}\n` : '\n';
        buffer += `${merchant.merchantId},${e.id},${merchant.tagId},${e.muid},${e.name},${new Date(e.time).toISOString()},"${data}",${seq}${tail}`;
        if (buffer.length > 1 << 20) {
          if (!stream.write(buffer)) await new Promise((resolve) => stream.once('drain', resolve));
          buffer = '';
          progress.add(0);
        }
        if ((i + 1) % 10_000 === 0) progress.add(10_000);
      }
      stream.end(buffer);
      progress.add(count % 10_000);
      await finished;
    });
  }
  progress.finish();
  const loaded = Date.now();
  await sql`set maintenance_work_mem = '512MB'`;
  // pg_indexes shows a partitioned table's index as `ON ONLY` the parent: run as shown, it would
  // build no partition's index (every seeded read was a sequential scan, 0028 to 2026-11-28).
  for (const index of indexes) await sql.unsafe(index.definition.replace(' ON ONLY ', ' ON '));
  await sql`insert into event_ids (merchant_id, id, event_time)
    select merchant_id, id, event_time from events order by merchant_id, id on conflict do nothing`;
  process.stderr.write(
    `${label}: rebuilt ${indexes.length} indexes and the event ids in ${((Date.now() - loaded) / 1000).toFixed(1)} s\n`,
  );
  return { events: total, seconds: (Date.now() - started) / 1000 };
}
