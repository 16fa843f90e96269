import { sql } from 'drizzle-orm';
import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
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
    /**
     * Set by DELETE (migration 0021): the merchant is gone for every reader at once; the row stays as
     * a tombstone until the background purge (jobs/merchant-purge.ts) has removed its data.
     */
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
    /** The purge's lease: the process purging this deleted merchant holds it until then. */
    purgeClaimedUntil: timestamp('purge_claimed_until', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    // The merchant list pages through one partner's live merchants in creation order.
    index('merchants_partner_created_idx').on(t.partnerId, t.createdAt, t.id).where(sql`${t.deletedAt} IS NULL`),
    // The purge's claim: deleted merchants, oldest deletion first.
    index('merchants_deleted_idx').on(t.deletedAt).where(sql`${t.deletedAt} IS NOT NULL`),
  ],
);

export type MerchantRow = typeof merchants.$inferSelect;
