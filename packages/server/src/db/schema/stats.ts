import {
  bigint,
  bigserial,
  customType,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Uint8Array }>({ dataType: () => 'bytea' });

/**
 * Statistics aggregates (migration 0017), written by `storeEvents` in the statement that inserts the
 * events, per merchant and 15-minute UTC bucket; `visitors` holds a sketch (features/stats/sketch.ts).
 */
export const statBuckets = pgTable(
  'stat_buckets',
  {
    merchantId: uuid('merchant_id').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'string' }).notNull(),
    eventName: text('event_name').notNull(),
    events: bigint('events', { mode: 'number' }).notNull(),
    visitors: bytea('visitors').notNull(),
  },
  (t) => [primaryKey({ name: 'stat_buckets_pkey', columns: [t.merchantId, t.bucket, t.eventName] })],
);

/** `Purchase` events per currency: their count and the exact sum of their `value`. */
export const statRevenue = pgTable(
  'stat_revenue',
  {
    merchantId: uuid('merchant_id').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'string' }).notNull(),
    currency: text('currency').notNull(),
    purchases: bigint('purchases', { mode: 'number' }).notNull(),
    amount: numeric('amount').notNull(),
  },
  (t) => [primaryKey({ name: 'stat_revenue_pkey', columns: [t.merchantId, t.bucket, t.currency] })],
);

/** `PageView` events per dimension value (path, referrer host, utm_*). */
export const statDimensions = pgTable(
  'stat_dimensions',
  {
    merchantId: uuid('merchant_id').notNull(),
    dimension: text('dimension').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'string' }).notNull(),
    value: text('value').notNull(),
    events: bigint('events', { mode: 'number' }).notNull(),
    visitors: bytea('visitors').notNull(),
  },
  (t) => [primaryKey({ name: 'stat_dimensions_pkey', columns: [t.merchantId, t.dimension, t.bucket, t.value] })],
);

/**
 * Events stored but not yet in the aggregates: per statement and merchant, the `seq` range it
 * inserted (migration 0020), folded by features/stats/fold.ts.
 */
export const statPending = pgTable('stat_pending', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  merchantId: uuid('merchant_id').notNull(),
  firstSeq: bigint('first_seq', { mode: 'number' }).notNull(),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
});
