import { bigint, date, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';

/**
 * Exact per merchant / UTC day / event name counts of `events`, kept by statement-level triggers
 * on `events` (migration `event_day_counts_triggers`): every insert path, including ON CONFLICT
 * DO NOTHING retries, adds exactly the rows it really inserted. The event list sums whole days
 * here and counts only the partial edge days of a range in `events`, so `totalItems` stays exact
 * without counting every matching row.
 */
export const eventDayCounts = pgTable(
  'event_day_counts',
  {
    merchantId: uuid('merchant_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    eventName: text('event_name').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'event_day_counts_pkey', columns: [t.merchantId, t.day, t.eventName] })],
);
