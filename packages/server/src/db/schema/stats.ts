import { sql } from 'drizzle-orm';
import { bigint, index, pgTable, primaryKey, timestamp, uuid } from 'drizzle-orm/pg-core';

/** Events stored but not yet in the statistics' ClickHouse. */
export const statsOutbox = pgTable(
  'stats_outbox',
  {
    merchantId: uuid('merchant_id').notNull(),
    firstSeq: bigint('first_seq', { mode: 'number' }).notNull(),
    lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
    claimedUntil: timestamp('claimed_until', { withTimezone: true, precision: 3 })
      .notNull()
      .default(sql`now() + interval '30 seconds'`),
  },
  (t) => [
    primaryKey({ name: 'stats_outbox_pkey', columns: [t.merchantId, t.firstSeq] }),
    index('stats_outbox_claimed_idx').on(t.claimedUntil),
  ],
);
