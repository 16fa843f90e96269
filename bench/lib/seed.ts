import type { Sql } from 'postgres';
import { Progress } from './progress.js';

/** 12 event names with a realistic skew (page views dominate, purchases are rare). */
export const EVENT_MIX: ReadonlyArray<readonly [string, number]> = [
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
export const DAYS = 90;
const DAY_MS = 86_400_000;
/** Visitors per merchant: muids `u0` ... `u49999`. */
export const MUIDS = 50_000;
/** Distinct page paths: `/p/0` ... `/p/976`. */
export const PATHS = 977;

/** The last whole UTC day of the seeded window ends at this instant (today's midnight). */
export const windowEnd = (): number => Math.floor(Date.now() / DAY_MS) * DAY_MS;

/** Each name with the upper bound of its share of [0, 1), summed in EVENT_MIX's order. */
export const CUMULATIVE_MIX = (() => {
  let sum = 0;
  return EVENT_MIX.map(([name, weight]) => {
    sum += weight;
    return [name, sum] as const;
  });
})();

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
 * The random draws of event `n` of merchant `m`: mulberry32 seeded by both, so a seed never
 * depends on what ran before it (two databases seeded alike hold the same events, and
 * lib/clickhouse-seed.ts generates them in SQL).
 */
function eventDraws(m: number, n: number, count: number): number[] {
  const seed = (Math.imul(m + 1, MERCHANT_SPREAD) ^ n) >>> 0;
  return Array.from({ length: count }, (_, k) => mulberryMix((seed + (k + 1) * MULBERRY_STEP) >>> 0));
}

const UNIT = 2 ** 32;

function pickName(r: number): string {
  for (const [name, upTo] of CUMULATIVE_MIX) if (r < upTo) return name;
  return EVENT_MIX[0]?.[0] as string;
}

const hex = (value: number, digits: number) => value.toString(16).padStart(digits, '0');

/** One seeded event (lib/clickhouse-seed.ts writes the same in SQL). */
export interface SeededEvent {
  /** The merchant's index among the seeded merchants, and the event's number among its events. */
  m: number;
  n: number;
  time: number;
  name: string;
  muid: string;
  path: string;
  value: number;
  id: string;
}

/**
 * Event `j` of a seed of `total` events over `merchants` merchants (each already holding
 * `firstEvent`): uniform over the window ending at `end`, in time order; the merchants take turns.
 * Its id is a UUID of its draws, merchant index and number (unique per merchant by construction).
 */
export function seededEvent(j: number, total: number, merchants: number, firstEvent: number, end: number): SeededEvent {
  const span = DAYS * DAY_MS;
  const m = j % merchants;
  const n = firstEvent + Math.floor(j / merchants);
  const [r0, r1, r2, r3, r4] = eventDraws(m, n, 5) as [number, number, number, number, number];
  return {
    m,
    n,
    time: end - span + Math.floor(((j + r0 / UNIT) * span) / total),
    name: pickName(r1 / UNIT),
    muid: `u${Math.floor((r2 / UNIT) * MUIDS)}`,
    path: `/p/${j % PATHS}`,
    value: (j % 100) + 0.5,
    id: `${hex(r3, 8)}-${hex(r4 >>> 16, 4)}-4${hex(r4 & 0xfff, 3)}-${hex(8 + ((m >>> 12) & 3), 1)}${hex(m & 0xfff, 3)}-${hex(n, 12)}`,
  };
}

export interface SeedMerchant {
  merchantId: string;
  tagId: string;
}

/**
 * Adds `perMerchant` events to every merchant with COPY (CSV), spread uniformly over the 90 days
 * before `windowEnd()`, in arrival order: the rows go into the table in event-time order, the
 * merchants interleaved, as the collector stores them when they happen (a merchant's newest
 * events sit together at the end of the table, not scattered over all of it). The triggers on
 * events (day counts, ordering, notifications) run as for any insert. Deterministic
 * (`seededEvent`): `firstEvent` is what every merchant holds already.
 */
export async function seedEvents(
  sql: Sql,
  merchants: readonly SeedMerchant[],
  perMerchant: number,
  label: string,
  firstEvent = 0,
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
      const stream = await tx`copy events (merchant_id, id, tag_id, muid, event_name, event_time, raw_data, seq)
      from stdin with (format csv)`.writable();
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
        // Purchases carry a currency, so the statistics count their revenue.
        const currency = e.name === 'Purchase' ? ',""currency"":""EUR""' : '';
        const data = `{""path"":""${e.path}"",""ref"":""bench"",""value"":${e.value}${currency}}`;
        buffer += `${merchant.merchantId},${e.id},${merchant.tagId},${e.muid},${e.name},${new Date(e.time).toISOString()},"${data}",${seq}\n`;
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
