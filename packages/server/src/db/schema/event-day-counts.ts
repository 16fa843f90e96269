import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';

/**
 * Exact per merchant / UTC day / event name counts of `events`, as delta rows (migration 0029;
 * docs/decisions/day-count-deltas.md): statement-level triggers on `events` append one row per key
 * per statement (negative for deletes), with no unique key, so concurrent writers of one merchant
 * never wait for each other here. A key's count is `sum(n)` of its rows; the background compaction
 * (jobs/day-count-compaction.ts) merges them into one (`merged`). The event list sums whole days
 * here and counts only the partial edge days of a range in `events`.
 */
export const eventDayCounts = pgTable(
  'event_day_counts',
  {
    merchantId: uuid('merchant_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    eventName: text('event_name').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
    merged: boolean('merged').notNull().default(false),
  },
  (t) => [
    index('event_day_counts_key_idx').on(t.merchantId, t.day, t.eventName),
    index('event_day_counts_unmerged_idx').on(t.merchantId, t.day, t.eventName).where(sql`NOT ${t.merged}`),
  ],
);
