import { integer, pgTable, uuid } from 'drizzle-orm/pg-core';
import { partners } from './partners.js';

/**
 * What a partner owns, counted where a cap needs an exact count in constant time (migration 0016):
 * the merchant create bumps `merchants` in its own statement while below MAX_MERCHANTS_PER_PARTNER
 * (the row lock, held to commit, orders one partner's creates only).
 */
export const partnerUsage = pgTable('partner_usage', {
  partnerId: uuid('partner_id')
    .primaryKey()
    .references(() => partners.id, { onDelete: 'cascade' }),
  merchants: integer('merchants').notNull().default(0),
});
