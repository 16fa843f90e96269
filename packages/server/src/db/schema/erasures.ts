import { sql } from 'drizzle-orm';
import { bigint, boolean, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { partners } from './partners.js';

/** Visitor erasures: one muid of one merchant or of every merchant of the partner. */
export const erasures = pgTable(
  'erasures',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    /** No foreign key: a merchant's purge deletes its erasures with its other rows. */
    merchantId: uuid('merchant_id'),
    muid: text('muid').notNull(),
    suppress: boolean('suppress').notNull(),
    /** `pending`, `running` or `completed`. */
    status: text('status').notNull().default('pending'),
    eventsDeleted: bigint('events_deleted', { mode: 'number' }).notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
    /** The job's lease. */
    claimedUntil: timestamp('claimed_until', { withTimezone: true, precision: 3 }),
    /** Null: suppressed (until completion, or forever with `suppress`). */
    suppressedUntil: timestamp('suppressed_until', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('erasures_muid_idx').on(t.muid),
    index('erasures_open_idx').on(t.createdAt).where(sql`${t.status} <> 'completed'`),
    index('erasures_completed_idx').on(t.partnerId, t.completedAt).where(sql`${t.completedAt} IS NOT NULL`),
  ],
);

export type ErasureRow = typeof erasures.$inferSelect;
