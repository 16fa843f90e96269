import { sql } from 'drizzle-orm';
import { bigint, index, pgEnum, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The consent state an event was collected under (migration 0024; docs/decisions/consent.md). */
export const eventConsent = pgEnum('event_consent', ['not_required', 'granted', 'implied', 'cookieless']);

/** Tracking events, partitioned by month of `event_time`. */
export const events = pgTable(
  'events',
  {
    merchantId: uuid('merchant_id').notNull(),
    id: text('id').notNull(),
    tagId: uuid('tag_id').notNull(),
    muid: text('muid').notNull(),
    eventName: text('event_name').notNull(),
    eventTime: timestamp('event_time', { withTimezone: true, precision: 3 }).notNull(),
    rawData: text('raw_data').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** Ingestion order per merchant, for streaming and resume: derived from the writing transaction's id. */
    seq: bigint('seq', { mode: 'number' }).notNull().default(sql`null`),
    consent: eventConsent('consent').notNull().default('not_required'),
    /** The visitor's client, `country|device|browser|os` (migration 0038; features/stats/stored-event.ts). */
    client: text('client'),
  },
  (t) => [
    // sortBy=event_time (either direction) with an optional date range.
    index('events_merchant_time_idx').on(t.merchantId, t.eventTime, t.id),
    // An event-name filter, and sortBy=event_name.
    index('events_merchant_name_time_idx').on(t.merchantId, t.eventName, t.eventTime, t.id),
    index('events_merchant_seq_idx').on(t.merchantId, t.seq),
    // One visitor's events (migration 0022): erasure batches and the list's `muid=` filter.
    index('events_merchant_muid_time_idx').on(t.merchantId, t.muid, t.eventTime, t.id),
  ],
);

export type EventRow = typeof events.$inferSelect;

/** Every stored event's id: ingestion inserts the ids first, ON CONFLICT DO NOTHING. */
export const eventIds = pgTable(
  'event_ids',
  {
    merchantId: uuid('merchant_id').notNull(),
    id: text('id').notNull(),
    eventTime: timestamp('event_time', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ name: 'event_ids_pkey', columns: [t.merchantId, t.id] })],
);
