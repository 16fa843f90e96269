import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { merchants } from './merchants.js';

/** A merchant's goals (migration 0039): an event name or a page path pattern that counts as a conversion. */
export const goals = pgTable(
  'goals',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    merchantId: uuid('merchant_id')
      .notNull()
      .references(() => merchants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    eventName: text('event_name'),
    pathPattern: text('path_pattern'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('goals_merchant_idx').on(t.merchantId, t.createdAt, t.id),
    check('goals_one_kind', sql`(${t.eventName} is null) <> (${t.pathPattern} is null)`),
  ],
);

export type GoalRow = typeof goals.$inferSelect;
