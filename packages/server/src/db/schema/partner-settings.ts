import { boolean, doublePrecision, integer, pgTable, timestamp, uuid } from 'drizzle-orm/pg-core';
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
  /** `stats.digest` on (migration 0040): each merchant's weekly digest, Monday 06:00 in its zone. */
  statsDigest: boolean('stats_digest').notNull().default(false),
  /** `stats.spike` on: visitors of an hour at least `statsSpikeMultiple` x the median of that hour in the 4 weeks before. */
  statsSpike: boolean('stats_spike').notNull().default(false),
  statsSpikeMultiple: doublePrecision('stats_spike_multiple').notNull().default(3),
});
