import { sql } from 'drizzle-orm';
import { bigint, boolean, date, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';

/** Exact per merchant / UTC day / event name counts of `events`, as delta rows. */
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
