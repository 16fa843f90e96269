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
  },
  // The merchant list pages through one partner's merchants in creation order.
  (t) => [index('merchants_partner_created_idx').on(t.partnerId, t.createdAt, t.id)],
);

export type MerchantRow = typeof merchants.$inferSelect;
