import { integer, pgTable, uuid } from 'drizzle-orm/pg-core';
import { partners } from './partners.js';

/** What a partner owns, counted where a cap needs an exact count in constant time. */
export const partnerUsage = pgTable('partner_usage', {
  partnerId: uuid('partner_id')
    .primaryKey()
    .references(() => partners.id, { onDelete: 'cascade' }),
  merchants: integer('merchants').notNull().default(0),
});
