import { sql } from 'drizzle-orm';
import { check, index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { merchants } from './merchants.js';

/**
 * The statistics' notices sent (migration 0040): a `stats.digest` per merchant and week (`period`:
 * the week's Monday, `YYYY-MM-DD`), a `stats.spike` per merchant and local day (`period`: the date).
 * Inserted in the transaction of the webhook's outbox row: the key lets one through, ever.
 */
export const statsNotices = pgTable(
  'stats_notices',
  {
    merchantId: uuid('merchant_id')
      .notNull()
      .references(() => merchants.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull().$type<'digest' | 'spike'>(),
    period: text('period').notNull(),
    /** The webhook message sent (not a reference: webhook retention deletes messages). */
    messageId: uuid('message_id'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'stats_notices_pkey', columns: [t.merchantId, t.kind, t.period] }),
    index('stats_notices_created_idx').on(t.createdAt),
    check('stats_notices_kind', sql`${t.kind} in ('digest', 'spike')`),
  ],
);
