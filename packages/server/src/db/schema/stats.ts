import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  customType,
  integer,
  numeric,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Uint8Array }>({ dataType: () => 'bytea' });

/**
 * Statistics aggregates (migrations 0017, 0027), kept by the fold (features/stats/fold.ts) per
 * merchant, level (`grain` in minutes, UTC: 15, 60, 1440 or 10080, 7-day weeks; `stat_dimensions` no 15)
 * and bucket; `event_name` '' is the row of all names. `visitors` holds a sketch (features/stats/sketch.ts). The three aggregate tables
 * are at fillfactor 50 (migration 0030, not expressible here): the fold's updates stay HOT.
 */
export const statBuckets = pgTable(
  'stat_buckets',
  {
    merchantId: uuid('merchant_id').notNull(),
    grain: smallint('grain').notNull().default(15),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'string' }).notNull(),
    eventName: text('event_name').notNull(),
    events: bigint('events', { mode: 'number' }).notNull(),
    visitors: bytea('visitors').notNull(),
    /** `visitors` counted by a read (migration 0033); NULL since the sketch last changed. */
    visitorCount: integer('visitor_count'),
  },
  (t) => [primaryKey({ name: 'stat_buckets_pkey', columns: [t.merchantId, t.grain, t.bucket, t.eventName] })],
);

/**
 * A multi-row point's visitors as a read counted them (migration 0035), valid while `print` (of the
 * rows it united, their xmin among them) is what the next read computes: features/stats/visitor-counts.ts.
 */
export const statPointVisitors = pgTable(
  'stat_point_visitors',
  {
    merchantId: uuid('merchant_id').notNull(),
    /** '' unfiltered, else the sorted event-name filter as JSON. */
    names: text('names').notNull(),
    lo: timestamp('lo', { withTimezone: true, mode: 'string' }).notNull(),
    hi: timestamp('hi', { withTimezone: true, mode: 'string' }).notNull(),
    print: uuid('print').notNull(),
    visitors: integer('visitors').notNull(),
  },
  (t) => [primaryKey({ name: 'stat_point_visitors_pkey', columns: [t.merchantId, t.names, t.lo, t.hi] })],
);

/** `Purchase` events per currency: their count and the exact sum of their `value`. */
export const statRevenue = pgTable(
  'stat_revenue',
  {
    merchantId: uuid('merchant_id').notNull(),
    grain: smallint('grain').notNull().default(15),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'string' }).notNull(),
    currency: text('currency').notNull(),
    purchases: bigint('purchases', { mode: 'number' }).notNull(),
    amount: numeric('amount').notNull(),
  },
  (t) => [primaryKey({ name: 'stat_revenue_pkey', columns: [t.merchantId, t.grain, t.bucket, t.currency] })],
);

/** `PageView` events per dimension value (path, referrer host, utm_*). */
export const statDimensions = pgTable(
  'stat_dimensions',
  {
    merchantId: uuid('merchant_id').notNull(),
    dimension: text('dimension').notNull(),
    grain: smallint('grain').notNull().default(15),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'string' }).notNull(),
    value: text('value').notNull(),
    events: bigint('events', { mode: 'number' }).notNull(),
    visitors: bytea('visitors').notNull(),
  },
  (t) => [
    primaryKey({ name: 'stat_dimensions_pkey', columns: [t.merchantId, t.dimension, t.grain, t.bucket, t.value] }),
  ],
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
  /** The range's event_time bounds (migration 0028): the fold reads only those months of `events`. */
  firstTime: timestamp('first_time', { withTimezone: true, precision: 3 }).notNull().default(sql`'-infinity'`),
  lastTime: timestamp('last_time', { withTimezone: true, precision: 3 }).notNull().default(sql`'infinity'`),
});
