import { sql } from 'drizzle-orm';
import { bigint, index, pgEnum, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The consent state an event was collected under (migration 0024; docs/decisions/consent.md). */
export const eventConsent = pgEnum('event_consent', ['not_required', 'granted', 'implied', 'cookieless']);

/**
 * Tracking events, partitioned by month of `event_time` (migration 0028; docs/decisions/
 * events-partitioning.md): monthly partitions `events_pYYYY_MM` between the catch-alls
 * `events_before` and `events_after`. No primary key: one would have to hold the partition key,
 * idempotency by (merchant_id, id) is `event_ids`' job, and `events_merchant_time_idx` finds a row
 * by (merchant_id, id, event_time). merchant_id leads every index (the distribution column if
 * events ever move to Citus). No foreign keys: this is the hot, append-only table.
 */
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
    /**
     * Ingestion order per merchant, for streaming and resume (migration 0026): derived from the
     * writing transaction's id (`events_take_seqs`); readers stop below `events_horizon_seq()`.
     * An insert that leaves it out gets the transaction's next number from the `events_assign_seq`
     * trigger (hence the null default here).
     */
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

/**
 * Every stored event's id (migration 0028): ingestion inserts the ids first, ON CONFLICT DO NOTHING,
 * and stores only the events whose ids it won, so a retry is skipped whatever its event_time (a
 * collector request without one gets the server's time) and whichever partition it would land in.
 * An event delete removes its id in the same statement (features/events/delete-events.ts), an
 * emptied month its ids by the month's keys; `event_time` finds an event by id alone (the export's
 * `afterId`) through `events_merchant_time_idx`.
 */
export const eventIds = pgTable(
  'event_ids',
  {
    merchantId: uuid('merchant_id').notNull(),
    id: text('id').notNull(),
    eventTime: timestamp('event_time', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ name: 'event_ids_pkey', columns: [t.merchantId, t.id] })],
);
