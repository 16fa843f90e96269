import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { partners } from './partners.js';

export const merchants = pgTable(
  'merchants',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    partnerId: uuid('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** Set by DELETE: the merchant is gone for every reader at once. */
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
    /** The purge's lease: the process purging this deleted merchant holds it until then. */
    purgeClaimedUntil: timestamp('purge_claimed_until', { withTimezone: true, precision: 3 }),
    /** Days its events are kept (migration 0023); null: the partner's default, then EVENT_RETENTION_DAYS. */
    retentionDays: integer('retention_days'),
    /** The retention job's lease (jobs/event-retention.ts): one process works this merchant until then. */
    retentionClaimedUntil: timestamp('retention_claimed_until', { withTimezone: true, precision: 3 }),
    /** When its last retention pass started: events older than this minus the period are gone. */
    retentionCheckedAt: timestamp('retention_checked_at', { withTimezone: true, precision: 3 }),
    /** Its IANA time zone, canonical (migration 0040): the week of its `stats.digest`. */
    timezone: text('timezone').notNull().default('UTC'),
  },
  (t) => [
    // The merchant list pages through one partner's live merchants in creation order.
    index('merchants_partner_created_idx').on(t.partnerId, t.createdAt, t.id).where(sql`${t.deletedAt} IS NULL`),
    // The purge's claim: deleted merchants, oldest deletion first.
    index('merchants_deleted_idx').on(t.deletedAt).where(sql`${t.deletedAt} IS NOT NULL`),
    // The retention job's claim: live merchants, the longest unchecked first.
    index('merchants_retention_due_idx').on(t.retentionCheckedAt).where(sql`${t.deletedAt} IS NULL`),
  ],
);

export type MerchantRow = typeof merchants.$inferSelect;
