import { integer, pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';
import { partners } from './partners.js';

/** A partner's own settings, a row once it sets one. */
export const partnerSettings = pgTable('partner_settings', {
  partnerId: uuid('partner_id')
    .primaryKey()
    .references(() => partners.id, { onDelete: 'cascade' }),
  /** Days its merchants' events are kept unless a merchant sets its own; null: EVENT_RETENTION_DAYS. */
  defaultRetentionDays: integer('default_retention_days'),
  /** When the partner last changed its retention default: every merchant of it is due for a pass again. */
  retentionUpdatedAt: timestamp('retention_updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});
