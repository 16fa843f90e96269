import { randomUUID } from 'node:crypto';
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

/** The last whole UTC day of the seeded window ends at this instant (today's midnight). */
export const windowEnd = (): number => Math.floor(Date.now() / DAY_MS) * DAY_MS;

const cumulative = (() => {
  let sum = 0;
  return EVENT_MIX.map(([name, weight]) => {
    sum += weight;
    return [name, sum] as const;
  });
})();

function pickName(): string {
  const r = Math.random();
  for (const [name, upTo] of cumulative) if (r < upTo) return name;
  return EVENT_MIX[0]?.[0] as string;
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
 * events (day counts, ordering, notifications) run as for any insert.
 */
export async function seedEvents(sql: Sql, merchants: readonly SeedMerchant[], perMerchant: number, label: string) {
  const total = perMerchant * merchants.length;
  const progress = new Progress(label, total);
  const end = windowEnd();
  const span = DAYS * DAY_MS;
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
        const j = done + i;
        // Event j of `total`: uniform over the window, in time order; merchants take turns.
        const time = new Date(end - span + Math.floor(((j + Math.random()) * span) / total)).toISOString();
        const m = j % merchants.length;
        const merchant = merchants[m] as SeedMerchant;
        const seq = (seqs[m] as number) + 1;
        seqs[m] = seq;
        const name = pickName();
        const muid = `u${Math.floor(Math.random() * 50_000)}`;
        const data = `{""path"":""/p/${j % 977}"",""ref"":""bench"",""value"":${(j % 100) + 0.5}}`;
        buffer += `${merchant.merchantId},${randomUUID()},${merchant.tagId},${muid},${name},${time},"${data}",${seq}\n`;
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
